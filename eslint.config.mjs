// typescript-eslint's recommended type-checked rules, plus the ones reviewers here care about most (see shared conventions §12).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'libs/client/dist/**', 'node_modules/**', 'libs/client/src/api-schema.ts', 'bench/**', 'test/smoke/**', '*.js', '*.mjs'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: ['./tsconfig.json', './apps/console/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // Unused on purpose, by convention: a parameter the signature needs but the body does not (`_query: NoQueryDto`,
      // checked by the validation pipe), and a property named only to leave it out of a rest object.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // An interface that other files fill in by declaration merging (the client's ActionSchemas, written by
      // `audit-trail-client types`) starts empty: it names what it extends, so it is not `{}` by mistake.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    // e2e suites read HTTP response bodies and SQL rows, untyped (supertest's `res.body: any`, TypeORM's query(): any)
    // and checked by the assertions themselves; typing every body would restate the OpenAPI description, which
    // test/support/openapi-check.ts already checks every response against. The other recommended rules apply here too.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
