// Shared jest settings: TypeScript through ts-jest (transpile only; `tsc` typechecks in build).
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', target: 'es2023', esModuleInterop: true, resolveJsonModule: true, isolatedModules: true } }],
  },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 30000,
};
