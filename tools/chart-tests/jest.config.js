// Native ESM (kubernetes-models is ESM only): the test script sets --experimental-vm-modules.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.mjs'],
  transform: {},
  testTimeout: 60_000,
};
