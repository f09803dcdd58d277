// Phase (f) of `npm run test:kubernetes`: the API conformance suite of tools/contract-tests, run
// unchanged against the release in the test cluster, and ./receiver.int.test.ts (an event to the
// cluster's HTTPS receiver). Only @worklane/testing is swapped for ./in-cluster-testing.cjs, whose
// startSystem() hands back the release instead of starting services.
const path = require('node:path');

const contractTests = path.join(__dirname, '..', '..', 'contract-tests');

module.exports = {
  ...require('../../../jest.preset.cjs'),
  rootDir: contractTests,
  roots: [path.join(contractTests, 'test'), __dirname],
  testMatch: ['<rootDir>/test/conformance.int.test.ts', path.join(__dirname, '*.int.test.ts')],
  moduleNameMapper: { '^@worklane/testing$': path.join(__dirname, 'in-cluster-testing.cjs') },
  testTimeout: 120_000,
  // The run's directory, so nothing is written into the repository.
  cacheDirectory: process.env.WORKLANE_K8S_JEST_CACHE || path.join(require('node:os').tmpdir(), 'worklane-k8s-jest'),
};
