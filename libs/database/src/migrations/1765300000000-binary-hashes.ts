import { MigrationInterface, QueryRunner } from 'typeorm';
import { HEAD_FORWARD_1763800000000, HEAD_FORWARD_1765300000000 } from './functions/audit-chain-head-forward';
import { STARTS_EMPTY_1763800000000, STARTS_EMPTY_1765300000000 } from './functions/audit-chain-starts-empty';
import { PRUNE_CHAIN_1765000000000, PRUNE_CHAIN_1765300000000 } from './functions/audit-prune-chain';

/** The genesis hash, 32 zero bytes: a new chain's `last_hash`. */
const GENESIS = `decode(repeat('00', 32), 'hex')`;

/** The hash columns, table by table, and the CHECK each gets (ck_checkpoints_hash replaces the hex pattern). */
const COLUMNS: Record<string, [column: string, check: string][]> = {
  events: [
    ['previous_hash', 'ck_events_previous_hash'],
    ['hash', 'ck_events_hash'],
  ],
  chains: [
    ['last_hash', 'ck_chains_last_hash'],
    ['pruned_hash', 'ck_chains_pruned_hash'],
  ],
  checkpoints: [['hash', 'ck_checkpoints_hash']],
};

/**
 * Every SHA-256 hash stored as its 32 bytes (`bytea`) instead of 64 hex characters (issue 28): 33
 * bytes a hash on disk instead of 65, and the events' two hashes 64 bytes less a row. On the wire,
 * in exports and logs they stay lowercase hex: the entities' `hexBytes` transformer reads and writes
 * them, and SQL that takes a hash as a parameter decodes it (`decode($n, 'hex')`).
 *
 * Each table is rewritten once (one ALTER TABLE with all its columns). The functions that read a hash
 * as text are replaced: audit_chain_starts_empty (the genesis), audit_chain_head_forward (its
 * `first_link` variable, char(64)) and audit_prune_chain (the Merkle leaf
 * of an event, with its SECURITY DEFINER and search_path kept). The triggers that only compare hashes
 * with hashes need no change. ALTER TABLE fires no row or statement trigger (it is not an UPDATE).
 */
export class BinaryHashes1765300000000 implements MigrationInterface {
  name = 'BinaryHashes1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE checkpoints DROP CONSTRAINT ck_checkpoints_hash`);
    await q.query(`ALTER TABLE chains ALTER COLUMN last_hash DROP DEFAULT`);
    for (const [table, columns] of Object.entries(COLUMNS)) {
      await q.query(
        `ALTER TABLE ${table} ${columns
          .map(([column]) => `ALTER COLUMN ${column} TYPE bytea USING decode(${column}, 'hex')`)
          .join(
            ', ',
          )}, ${columns.map(([column, check]) => `ADD CONSTRAINT ${check} CHECK (octet_length(${column}) = 32)`).join(', ')}`,
      );
    }
    await q.query(`ALTER TABLE chains ALTER COLUMN last_hash SET DEFAULT ${GENESIS}`);
    await q.query(STARTS_EMPTY_1765300000000);
    await q.query(HEAD_FORWARD_1765300000000);
    await q.query(PRUNE_CHAIN_1765300000000);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(PRUNE_CHAIN_1765000000000);
    await q.query(STARTS_EMPTY_1763800000000);
    await q.query(HEAD_FORWARD_1763800000000);
    await q.query(`ALTER TABLE chains ALTER COLUMN last_hash DROP DEFAULT`);
    for (const [table, columns] of Object.entries(COLUMNS)) {
      await q.query(
        `ALTER TABLE ${table} ${columns.map(([, check]) => `DROP CONSTRAINT ${check}`).join(', ')}, ${columns
          .map(([column]) => `ALTER COLUMN ${column} TYPE char(64) USING encode(${column}, 'hex')`)
          .join(', ')}`,
      );
    }
    await q.query(`ALTER TABLE chains ALTER COLUMN last_hash SET DEFAULT repeat('0', 64)`);
    await q.query(`ALTER TABLE checkpoints ADD CONSTRAINT ck_checkpoints_hash CHECK (hash ~ '^[0-9a-f]{64}$')`);
  }
}
