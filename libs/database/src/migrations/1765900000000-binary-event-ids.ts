import { MigrationInterface, QueryRunner } from 'typeorm';
import { ERASE_EVENTS_1765600000000 } from './1765600000000-erasure';
import { edited } from './1765000000000-retention-log';

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

/**
 * Event ids stored as their ULID's 16 bytes (`uuid`) instead of 30 characters of text (issue 28, the
 * first of the binary ids): 15 bytes less in each row, in pk_events and in ix_events_account_time,
 * whose keyset order (timestamp, id) is unchanged, since a ULID's bytes sort as its text does. On the
 * wire, in exports, logs and hashes an id stays `evt_` and a ULID: EventEntity's transformer reads
 * it, and SQL that takes an event id is given ulidToUuid's text.
 *
 * One rewrite of `events` (ALTER TABLE rebuilds its indexes with it; it fires no row trigger). Of the
 * functions only audit_erase_events reads an event id from outside (its rows' ids, now uuid text).
 */
export class BinaryEventIds1765900000000 implements MigrationInterface {
  name = 'BinaryEventIds1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(ULID_UUID);
    await q.query(UUID_ULID);
    await q.query(`ALTER TABLE events ALTER COLUMN id TYPE uuid USING audit_ulid_uuid(id)`);
    await q.query(
      edited(ERASE_EVENTS_1765600000000, [
        ['CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'],
        ['AS r(id varchar,', 'AS r(id uuid,'],
      ]),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(ERASE_EVENTS_1765600000000.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'));
    await q.query(`ALTER TABLE events ALTER COLUMN id TYPE varchar(30) USING audit_uuid_ulid('evt', id)`);
    await q.query(`DROP FUNCTION audit_uuid_ulid(text, uuid)`);
    await q.query(`DROP FUNCTION audit_ulid_uuid(text)`);
  }
}
