// Native ESM (kubernetes-models is ESM only): the test script sets --experimental-vm-modules.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.mjs'],
  transform: {},
  testTimeout: 60_000,
  // Suites spend their time waiting on helm; two workers keep both cores busy.
  maxWorkers: 2,
};
