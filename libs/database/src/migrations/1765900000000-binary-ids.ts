import { MigrationInterface, QueryRunner } from 'typeorm';
import { ERASE_EVENTS_1765600000000, ERASE_EVENTS_1765900000000 } from './functions/audit-erase-events';
import {
  HOLD_LIFTED_RECENTLY_1765000000000,
  HOLD_LIFTED_RECENTLY_1765900000000,
} from './functions/audit-hold-lifted-recently';
import { PRUNE_CHAIN_1765300000000, PRUNE_CHAIN_1765900000000 } from './functions/audit-prune-chain';

/** Crockford's base 32 as ULIDs write it (libs/common's ids.ts): a digit's value is its index. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The value of the base-32 digits of `text` at 1-based `from` … `from + count − 1`, as an int8 expression. */
function digitsValue(text: string, from: number, count: number): string {
  return Array.from(
    { length: count },
    (_, i) => `((strpos('${CROCKFORD}', substr(${text}, ${from + i}, 1)) - 1)::int8 << ${5 * (count - 1 - i)})`,
  ).join(' | ');
}

/** `count` base-32 digits of the int8 expression `value`, as a text expression. */
function valueDigits(value: string, count: number): string {
  return Array.from(
    { length: count },
    (_, i) => `substr('${CROCKFORD}', (((${value}) >> ${5 * (count - 1 - i)}) & 31)::int + 1, 1)`,
  ).join(' || ');
}

/**
 * `evt_01ARZ3…` to its ULID's 16 bytes as a uuid: SQL's twin of ulidToUuid (libs/common), for this
 * migration's rewrite and for SQL written by hand (fixtures, an operator's query). Digits 1–10 of the
 * ULID are 48 bits (the first two of 50 are zero: the first digit is 0–7), digits 11–18 and 19–26 40
 * each: 12 + 10 + 10 hex digits. Anything else is refused with an error that names the value.
 */
const ULID_UUID = `
      CREATE FUNCTION audit_ulid_uuid(id text) RETURNS uuid
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT CASE WHEN id ~ '^[a-z]{3}_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN (
                 lpad(to_hex(${digitsValue('id', 5, 10)}), 12, '0') ||
                 lpad(to_hex(${digitsValue('id', 15, 8)}), 10, '0') ||
                 lpad(to_hex(${digitsValue('id', 23, 8)}), 10, '0'))::uuid
               ELSE ('not a prefixed ULID of 128 bits: ' || id)::uuid END
      $$`;

/** The stored uuid and its column's prefix back to the id (uuidToUlid's twin): down() and hand-written SQL. */
const UUID_ULID = (() => {
  const hex = `replace(u::text, '-', '')`;
  const part = (from: number, count: number) =>
    `('x' || lpad(substr(${hex}, ${from}, ${count}), 16, '0'))::bit(64)::int8`;
  return `
      CREATE FUNCTION audit_uuid_ulid(prefix text, u uuid) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT prefix || '_' || ${valueDigits(part(1, 12), 10)} || ${valueDigits(part(13, 10), 8)} || ${valueDigits(part(23, 10), 8)}
      $$`;
})();

/** Every column that holds an event's, an account's or a chain's id, by table, with its ids' prefix. */
const COLUMNS: Record<string, [column: string, prefix: 'evt' | 'acc' | 'chn'][]> = {
  accounts: [['id', 'acc']],
  chains: [
    ['id', 'chn'],
    ['account_id', 'acc'],
  ],
  events: [
    ['id', 'evt'],
    ['account_id', 'acc'],
    ['chain_id', 'chn'],
  ],
  merkle_nodes: [['chain_id', 'chn']],
  event_counts: [
    ['account_id', 'acc'],
    ['chain_id', 'chn'],
  ],
  checkpoints: [['chain_id', 'chn']],
  checkpoint_log_leaves: [['chain_id', 'chn']],
  retention_log: [
    ['account_id', 'acc'],
    ['chain_id', 'chn'],
  ],
  api_keys: [['account_id', 'acc']],
  destinations: [['account_id', 'acc']],
  erasures: [['account_id', 'acc']],
  idempotency_keys: [['account_id', 'acc']],
};

/** The foreign keys onto accounts and chains, as they are now: dropped for the rewrite, added back after it. */
async function foreignKeys(q: QueryRunner): Promise<{ table: string; name: string; definition: string }[]> {
  const keys: unknown = await q.query(
    `SELECT conrelid::regclass::text AS "table", conname AS "name", pg_get_constraintdef(oid) AS "definition"
       FROM pg_constraint WHERE contype = 'f' AND confrelid IN ('accounts'::regclass, 'chains'::regclass)
      ORDER BY conname`,
  );
  return keys as { table: string; name: string; definition: string }[];
}

/**
 * Event, account and chain ids stored as their ULID's 16 bytes (`uuid`) instead of 30 characters of
 * text, in every table that holds one (issue 28). In `events` alone an event's id is in its primary
 * key and the listing's index, and its account and chain lead every other index and its unique
 * position; the Merkle tree, the rollup and the checkpoints are keyed by the chain. On the wire, in
 * exports, logs, signed notes and hashes an id stays `evt_`, `acc_` or `chn_` and a ULID: the
 * entities' transformers read ids back, SQL that takes one is given ulidToUuid's text, and a ULID's
 * bytes sort as its text does (every keyset order, (timestamp, id) and the tail's, is unchanged).
 * Keys', destinations' and erasures' own ids stay text (a row each, not a row per event).
 *
 * The foreign keys onto accounts and chains are dropped, each table is rewritten once (ALTER TABLE
 * rebuilds its indexes; it fires no row trigger) and the keys are added back (checked again), then
 * the rewritten tables are analyzed: a type change drops a column's statistics, and the planner must
 * not choose the append triggers' and the reads' plans on guesses (see 1765700000000). Functions:
 * audit_hold_lifted_recently takes uuids; audit_prune_chain and audit_erase_events keep their
 * signatures (the service role's EXECUTE grant on the latter stays: least-privilege.sql names it)
 * and read the ids they are given as uuid text.
 *
 * Every instance of the older version must be stopped before this one starts: its statements bind
 * ids as text, which the new columns refuse.
 */
export class BinaryIds1765900000000 implements MigrationInterface {
  name = 'BinaryIds1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(ULID_UUID);
    await q.query(UUID_ULID);
    const keys = await foreignKeys(q);
    for (const key of keys) await q.query(`ALTER TABLE ${key.table} DROP CONSTRAINT ${key.name}`);
    for (const [table, columns] of Object.entries(COLUMNS)) {
      await q.query(
        `ALTER TABLE ${table} ${columns
          .map(([column]) => `ALTER COLUMN ${column} TYPE uuid USING audit_ulid_uuid(${column})`)
          .join(', ')}`,
      );
    }
    for (const key of keys) await q.query(`ALTER TABLE ${key.table} ADD CONSTRAINT ${key.name} ${key.definition}`);

    await q.query(`DROP FUNCTION audit_hold_lifted_recently(varchar, varchar, timestamptz)`);
    await q.query(HOLD_LIFTED_RECENTLY_1765900000000);
    await q.query(PRUNE_CHAIN_1765900000000);
    await q.query(ERASE_EVENTS_1765900000000);
    await analyze(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(ERASE_EVENTS_1765600000000);
    await q.query(PRUNE_CHAIN_1765300000000);
    await q.query(`DROP FUNCTION audit_hold_lifted_recently(uuid, uuid, timestamptz)`);
    const keys = await foreignKeys(q);
    for (const key of keys) await q.query(`ALTER TABLE ${key.table} DROP CONSTRAINT ${key.name}`);
    for (const [table, columns] of Object.entries(COLUMNS)) {
      await q.query(
        `ALTER TABLE ${table} ${columns
          .map(
            ([column, prefix]) =>
              `ALTER COLUMN ${column} TYPE varchar(30) USING audit_uuid_ulid('${prefix}', ${column})`,
          )
          .join(', ')}`,
      );
    }
    for (const key of keys) await q.query(`ALTER TABLE ${key.table} ADD CONSTRAINT ${key.name} ${key.definition}`);
    await q.query(HOLD_LIFTED_RECENTLY_1765000000000);
    await q.query(`DROP FUNCTION audit_uuid_ulid(text, uuid)`);
    await q.query(`DROP FUNCTION audit_ulid_uuid(text)`);
    await analyze(q);
  }
}

/** Statistics for the rewritten tables (a column's are dropped with its type). */
async function analyze(q: QueryRunner): Promise<void> {
  for (const table of Object.keys(COLUMNS)) await q.query(`ANALYZE ${table}`);
}
