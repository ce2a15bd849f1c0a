/**
 * Storage parameters of indexes, by name, as `pg_class.reloptions` prints them: what TypeORM cannot
 * declare, compared by `npm run migration:check` (schema-drift.ts) all the same.
 *
 * Three indexes of `events` whose keys grow with time fill their leaf pages (migration 1766100000000):
 * events are only inserted, so the 10 % PostgreSQL leaves free by default for updates in place would
 * stay empty.
 */
export const INDEX_STORAGE: Readonly<Record<string, string>> = {
  pk_events: 'fillfactor=100',
  ix_events_account_time: 'fillfactor=100',
  ix_events_account_txid: 'fillfactor=100',
};
