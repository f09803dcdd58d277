// Native ESM (the benchmarks are plain .mjs): the test script sets --experimental-vm-modules.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.mjs'],
  transform: {},
  testTimeout: 30_000,
};
