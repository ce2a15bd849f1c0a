import * as appendOnly from './append-only';
import * as bookkeeping from './bookkeeping';
import { DeclaredFunction, DeclaredTrigger } from './declare';
import * as erasure from './erasure';
import * as retention from './retention';

export * from './declare';

/**
 * Every function and trigger the migrated database has, with its current text, by the rules they keep:
 * appends (append-only.ts), retention (retention.ts), erasure (erasure.ts), and the service's bookkeeping
 * (bookkeeping.ts). The migrations apply frozen copies of these texts (migrations/functions); the
 * schema-drift check (npm run migration:check) fails on any difference between them and the database.
 */
export const DECLARED_FUNCTIONS: readonly DeclaredFunction[] = [
  ...appendOnly.FUNCTIONS,
  ...retention.FUNCTIONS,
  ...erasure.FUNCTIONS,
  ...bookkeeping.FUNCTIONS,
];

export const DECLARED_TRIGGERS: readonly DeclaredTrigger[] = [
  ...appendOnly.TRIGGERS,
  ...retention.TRIGGERS,
  ...erasure.TRIGGERS,
  ...bookkeeping.TRIGGERS,
];
