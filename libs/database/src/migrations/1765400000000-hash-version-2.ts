import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hash version 2 (docs/contract.md §17): chains created from now on hash salted commitments of the
 * personal fields, so that a value can be erased later without touching a hash.
 *
 * - `chains.hash_version`: 1 for every chain that exists (they keep §3's rule), 2 by default for new
 *   ones. The service's role is granted no UPDATE of it (least-privilege.sql), so a chain's version
 *   never changes.
 * - `events.salt_seed`: 16 random bytes per version-2 event, from which the salt of each of its fields
 *   is derived (the first 128 bits of SHA-256(seed ‖ 0x00 ‖ path): libs/hashing/src/salt-seed.ts): 17 bytes
 *   on disk instead of 17 per field. Null on version-1 events.
 * - `events.erasure`: null until an erasure; then the salts of the fields still held (the seed is
 *   deleted with the erased values) and the commitments of the erased ones.
 * Nullable columns without a default: no table is rewritten.
 */
export class HashVersion21765400000000 implements MigrationInterface {
  name = 'HashVersion21765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE chains ADD COLUMN hash_version smallint NOT NULL DEFAULT 1,
         ADD CONSTRAINT ck_chains_hash_version CHECK (hash_version IN (1, 2))`,
    );
    await q.query(`ALTER TABLE chains ALTER COLUMN hash_version SET DEFAULT 2`);
    await q.query(
      `ALTER TABLE events ADD COLUMN salt_seed bytea, ADD COLUMN erasure jsonb,
         ADD CONSTRAINT ck_events_salt_seed CHECK (octet_length(salt_seed) = 16)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events DROP CONSTRAINT ck_events_salt_seed, DROP COLUMN erasure, DROP COLUMN salt_seed`);
    await q.query(`ALTER TABLE chains DROP CONSTRAINT ck_chains_hash_version, DROP COLUMN hash_version`);
  }
}
