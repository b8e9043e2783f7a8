// ESLint flat config: @eslint/js recommended + typescript-eslint recommended, then
// eslint-config-prettier last so formatting is prettier's alone (`npm run format:check`).
'use strict';
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const prettier = require('eslint-config-prettier');

/** Node's CommonJS globals, for the plain .js scripts (the `globals` package is not a dependency). */
const NODE_GLOBALS = Object.fromEntries(
  [
    'require',
    'module',
    'exports',
    '__dirname',
    '__filename',
    'process',
    'console',
    'Buffer',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'URL',
  ].map((name) => [name, 'readonly']),
);

module.exports = tseslint.config(
  { ignores: ['dist/', '.cache/', 'node_modules/', 'data/', 'test/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: NODE_GLOBALS },
    rules: {
      // These scripts are CommonJS by design (package.json "type": "commonjs"; bin/ and scripts/ run uncompiled).
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    rules: {
      // A leading `_` marks a deliberately unused name (as tsc's noUnusedParameters allows); `{ key: _key, ...rest }` omits a field.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Wire-level tests read decoded response bodies (WireClient's `body: any`) field by field; typing each would restate the schema tables.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  prettier,
);
