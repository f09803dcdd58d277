// Shared jest settings: TypeScript through ts-jest (transpile only; `npm test` runs `turbo run
// typecheck`, tsc over every workspace's sources and tests, before the tests).
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', target: 'es2023', esModuleInterop: true, resolveJsonModule: true, isolatedModules: true } }],
  },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 30000,
};
