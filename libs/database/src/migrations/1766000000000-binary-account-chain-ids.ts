import { MigrationInterface, QueryRunner } from 'typeorm';
import { edited, HOLD_LIFTED_RECENTLY_1765000000000 } from './1765000000000-retention-log';
import { PRUNE_CHAIN_1765300000000 } from './1765300000000-binary-hashes';
import { ERASE_EVENTS_1765600000000 } from './1765600000000-erasure';

/** Every column that holds an account's id or a chain's id, by table, with its ids' prefix. */
const COLUMNS: Record<string, [column: string, prefix: 'acc' | 'chn'][]> = {
  accounts: [['id', 'acc']],
  chains: [
    ['id', 'chn'],
    ['account_id', 'acc'],
  ],
  events: [
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

/** audit_hold_lifted_recently on the stored ids. */
const HOLD_LIFTED_RECENTLY = edited(HOLD_LIFTED_RECENTLY_1765000000000, [
  ['(p_chain_id varchar, p_account_id varchar,', '(p_chain_id uuid, p_account_id uuid,'],
]);

/**
 * Accounts' and chains' ids stored as their ULID's 16 bytes (`uuid`) instead of 30 characters of text,
 * in every table (issue 28; event ids since 1765900000000): in `events` alone three of its indexes
 * and its unique position lead with one or both, and the Merkle tree, the rollup and the checkpoints
 * are keyed by the chain. On the wire, in exports, logs, signed notes and hashes an id stays `acc_` or
 * `chn_` and a ULID: the entities' transformers read them, SQL that takes one is given ulidToUuid's
 * text, and the ULIDs' order is the bytes' order (the chain listing's keyset is unchanged).
 *
 * The foreign keys onto the two are dropped, each table rewritten once, and the keys added back
 * (checked again on the new values). Functions: audit_hold_lifted_recently takes uuids;
 * audit_prune_chain and audit_erase_events keep their signatures (the service role's EXECUTE grant on
 * the latter stays; least-privilege.sql names it) and read the id they are given as uuid text.
 */
export class BinaryAccountChainIds1766000000000 implements MigrationInterface {
  name = 'BinaryAccountChainIds1766000000000';

  async up(q: QueryRunner): Promise<void> {
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
    await q.query(HOLD_LIFTED_RECENTLY);
    await q.query(
      edited(PRUNE_CHAIN_1765300000000, [
        ['WHERE ch.id = p_chain_id FOR UPDATE', 'WHERE ch.id = p_chain_id::uuid FOR UPDATE'],
        ["lifted less than % ago', c.id,", "lifted less than % ago', audit_uuid_ulid('chn', c.id),"],
      ]),
    );
    await q.query(
      edited(ERASE_EVENTS_1765600000000, [
        ['CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'],
        ['AS r(id varchar,', 'AS r(id uuid,'],
        ['e.account_id = p_account;', 'e.account_id = p_account::uuid;'],
      ]),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      edited(ERASE_EVENTS_1765600000000, [
        ['CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'],
        ['AS r(id varchar,', 'AS r(id uuid,'],
      ]),
    );
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
  }
}
