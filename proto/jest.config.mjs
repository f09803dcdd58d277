// Native ESM (the buf helpers are plain .mjs, shared with scripts/): the test script sets --experimental-vm-modules.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.mjs'],
  transform: {},
  testTimeout: 60_000,
};
