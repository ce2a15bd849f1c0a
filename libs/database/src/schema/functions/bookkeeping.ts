import { declareFunction, declareTrigger } from './declare';

/*
 * What the database keeps for the service's reads: transaction ids (the live tail's order), the statistics
 * rollup, and the id codecs. No promise of the threat model rests on them, but the reads do.
 */

/**
 * The inserting transaction's id, the default of events.txid: the live tail and the streams read events
 * in commit order by it, so they cannot skip one (docs/architecture.md, "The live tail").
 */
export const audit_current_txid = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_current_txid() RETURNS bigint LANGUAGE sql VOLATILE
    AS $$ SELECT pg_current_xact_id()::text::bigint $$`,
);

/**
 * The statistics rollup (event_counts) counts every inserted event, whoever inserted it (SECURITY DEFINER).
 */
export const audit_event_counts_added = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_event_counts_added() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  BEGIN
    INSERT INTO event_counts AS c (account_id, day, chain_id, action, count)
        SELECT x.account_id, (x."timestamp" AT TIME ZONE 'UTC')::date AS day, x.chain_id, x.action, count(*) AS n
          FROM added x GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT ON CONSTRAINT pk_event_counts DO UPDATE SET count = c.count + EXCLUDED.count;
    RETURN NULL;
  END $$`,
  { executableByPublic: false },
);

/**
 * The rollup forgets every deleted (pruned) event.
 */
export const audit_event_counts_removed = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_event_counts_removed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  DECLARE
    uncounted bigint;
  BEGIN
    WITH removed AS (
        SELECT x.account_id, (x."timestamp" AT TIME ZONE 'UTC')::date AS day, x.chain_id, x.action, count(*) AS n
          FROM gone x GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4),
    emptied AS (
      DELETE FROM event_counts c USING removed r
       WHERE (c.account_id, c.day, c.chain_id, c.action) = (r.account_id, r.day, r.chain_id, r.action)
         AND c.count = r.n
      RETURNING 1),
    lowered AS (
      UPDATE event_counts c SET count = c.count - r.n FROM removed r
       WHERE (c.account_id, c.day, c.chain_id, c.action) = (r.account_id, r.day, r.chain_id, r.action)
         AND c.count > r.n
      RETURNING 1)
    SELECT (SELECT count(*) FROM removed) - (SELECT count(*) FROM emptied) - (SELECT count(*) FROM lowered)
      INTO uncounted;
    IF uncounted <> 0 THEN
      RAISE EXCEPTION 'event_counts is out of step with events: % group(s) deleted were not counted', uncounted
        USING ERRCODE = 'data_corrupted';
    END IF;
    RETURN NULL;
  END $$`,
  { executableByPublic: false },
);

/**
 * `evt_01ARZ3…` to its ULID's 16 bytes as a uuid: SQL's twin of ulidToUuid (libs/common), for SQL written by
 * hand; anything else is refused with an error that names the value.
 */
export const audit_ulid_uuid = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_ulid_uuid(id text) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN id ~ '^[a-z]{3}_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN (
             lpad(to_hex(((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 5, 1)) - 1)::int8 << 45)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 6, 1)) - 1)::int8 << 40)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 7, 1)) - 1)::int8 << 35)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 8, 1)) - 1)::int8 << 30)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 9, 1)) - 1)::int8 << 25)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 10, 1)) - 1)::int8 << 20)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 11, 1)) - 1)::int8 << 15)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 12, 1)) - 1)::int8 << 10)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 13, 1)) - 1)::int8 << 5)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 14, 1)) - 1)::int8 << 0)), 12, '0') ||
             lpad(to_hex(((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 15, 1)) - 1)::int8 << 35)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 16, 1)) - 1)::int8 << 30)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 17, 1)) - 1)::int8 << 25)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 18, 1)) - 1)::int8 << 20)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 19, 1)) - 1)::int8 << 15)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 20, 1)) - 1)::int8 << 10)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 21, 1)) - 1)::int8 << 5)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 22, 1)) - 1)::int8 << 0)), 10, '0') ||
             lpad(to_hex(((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 23, 1)) - 1)::int8 << 35)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 24, 1)) - 1)::int8 << 30)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 25, 1)) - 1)::int8 << 25)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 26, 1)) - 1)::int8 << 20)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 27, 1)) - 1)::int8 << 15)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 28, 1)) - 1)::int8 << 10)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 29, 1)) - 1)::int8 << 5)
                     | ((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(id, 30, 1)) - 1)::int8 << 0)), 10, '0'))::uuid
           ELSE ('not a prefixed ULID of 128 bits: ' || id)::uuid END
  $$`,
);

/**
 * A stored uuid and its prefix back to the public id: uuidToUlid's twin.
 */
export const audit_uuid_ulid = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_uuid_ulid(prefix text, u uuid) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT prefix || '_'
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 45) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 40) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 35) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 30) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 25) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 20) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 15) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 10) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 5) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 1, 12), 16, '0'))::bit(64)::int8) >> 0) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 35) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 30) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 25) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 20) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 15) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 10) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 5) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 13, 10), 16, '0'))::bit(64)::int8) >> 0) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 35) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 30) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 25) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 20) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 15) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 10) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 5) & 31)::int + 1, 1)
      || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || lpad(substr(replace(u::text, '-', ''), 23, 10), 16, '0'))::bit(64)::int8) >> 0) & 31)::int + 1, 1)
  $$`,
);

/** Counts inserted events, always. */
export const trgEventsRollupInsert = declareTrigger(
  `CREATE TRIGGER trg_events_rollup_insert AFTER INSERT ON public.events REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION audit_event_counts_added()`,
  'always',
);

/** Uncounts deleted events, always. */
export const trgEventsRollupDelete = declareTrigger(
  `CREATE TRIGGER trg_events_rollup_delete AFTER DELETE ON public.events REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION audit_event_counts_removed()`,
  'always',
);

export const FUNCTIONS = [
  audit_current_txid,
  audit_event_counts_added,
  audit_event_counts_removed,
  audit_ulid_uuid,
  audit_uuid_ulid,
];

export const TRIGGERS = [trgEventsRollupInsert, trgEventsRollupDelete];
