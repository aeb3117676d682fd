// ESLint for the TypeScript sources (type-aware rules stay off to keep lint fast on 2 cores).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'native/build/**',
      'native/build-fuzz/**',
      'native/build-arm64/**',
      'native/build-arm64-addon/**',
      'test/.fixtures/**',
      'test/.artifacts/**',
      '.vscode-e2e/**',
      'models/**',
      'media/**/*.min.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        Buffer: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // A handle declared before the callbacks that reach it is assigned once but read early.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // The `leapfrog` launcher is plain CommonJS: it requires the bundle.
    files: ['bin/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
