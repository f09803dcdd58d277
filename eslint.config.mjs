// ESLint for the whole repository; `npm run lint` runs it with `prettier --check`, and `npm test`
// runs `npm run lint` as one of its suites. Prettier owns the layout (eslint-config-prettier,
// last, turns off every stylistic rule so that the two never disagree); ESLint owns mistakes,
// unused code and the order of imports. `npm run format` applies both.
//
// The rules need no type information: type-aware linting of the repository costs several times
// the CPU of the rest of it on a 2-core machine and needs a build first; the compiler's strict
// mode (tsconfig.base.json) already checks the types.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import { importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Test code: jest suites, their support files, and the package that starts services for them. */
const TEST_CODE = ['**/*.test.ts', '**/*.test.mjs', '**/test/**', 'packages/testing/src/**', 'tools/contract-tests/src/**'];

export default defineConfig(
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    '**/.cache/',
    '**/coverage/',
    '.worklane/',
    '.turbo/',
    'test-artifacts/',
    // Generated from the protos and from the OpenAPI document; their generators are linted.
    '**/src/generated/',
  ]),

  js.configs.recommended,
  tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: { 'import-x/internal-regex': '^@worklane/' },
    linterOptions: { reportUnusedDisableDirectives: 'error', reportUnusedInlineConfigs: 'error' },
    rules: {
      // One order of imports everywhere: node builtins, npm packages, the workspace's own
      // @worklane packages, then the package's own files; alphabetical within each group. Blank
      // lines between the groups are the file's choice. A service's `./instrumentation` comes
      // before everything: it starts tracing before express, pg and gRPC load, so that they can
      // be patched.
      'import-x/order': [
        'error',
        {
          groups: ['builtin', 'external', 'internal', ['parent', 'sibling', 'index']],
          pathGroups: [{ pattern: './instrumentation', group: 'builtin', position: 'before' }],
          'newlines-between': 'ignore',
          alphabetize: { order: 'asc', caseInsensitive: true },
        },
      ],
      'import-x/first': 'error',
      // One import per module; types inline (`import { x, type Y }`), as most files write them.
      'import-x/no-duplicates': ['error', { 'prefer-inline': true }],
      'import-x/newline-after-import': 'error',
      'import-x/no-self-import': 'error',

      // Unused code. A leading underscore marks what is there on purpose: an express error
      // handler's `_next` (express tells error handlers by their four parameters), or a property
      // taken out of an object so that the rest can be passed on.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // `== null` (null or undefined) is the one loose comparison the code uses.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // The validators reject control characters in text fields, and a character class of
      // control characters is the plain way to say which ones.
      'no-control-regex': 'off',
    },
  },

  // Tests read untyped JSON answers (`res.body`) and parse documents of any shape.
  {
    files: TEST_CODE,
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },

  // Plain JavaScript: the tools, scripts and jest configurations run on Node.
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // CommonJS: .cjs files and the jest configurations of the packages that are not ES modules.
    files: ['**/*.cjs', '**/jest.config.js'],
    ignores: ['tools/chart-tests/jest.config.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The tools' jest suites are native ES modules that use jest's globals.
    files: ['tools/*/test/**/*.mjs'],
    languageOptions: { globals: { ...globals.jest } },
  },
  {
    // The console's progressive-enhancement script runs in the browser as a classic script.
    files: ['services/console/public/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser } },
  },

  prettier,
);
