import { ValueTransformer } from 'typeorm';
// Relative, not @app/common: the TypeORM CLI (npm run migration:run) loads the entities without the path aliases.
import { ulidToUuid, uuidToUlid } from '../../../common/src/ids';

/**
 * An id stored as its ULID's 16 bytes (`uuid`, migration 1765900000000) and handled everywhere else
 * (API, exports, logs, hashes) as `prefix_` and the ULID: pg gives a uuid as text, read back with
 * the column's prefix. A query's parameter is converted where it is bound (ulidToUuid).
 */
export function ulidAsUuid(prefix: string): ValueTransformer {
  return {
    to: (value: string | null | undefined) => (value === null || value === undefined ? value : ulidToUuid(value)),
    from: (value: string | null) => (value === null ? null : uuidToUlid(prefix, value)),
  };
}
