import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How far ahead of the database's clock an event's timestamp may be. The service takes timestamps
 * from its own host's clock (under the chain lock, never behind the head); hosts kept by NTP
 * agree within milliseconds, so 5 s tolerates any honest skew while a forged future timestamp
 * (2099), which every later event of the chain would inherit, is refused.
 */
export const MAX_CLOCK_SKEW = '5 seconds';

/**
 * Time order of events (docs/contract.md §8): within a chain, timestamps never decrease as positions
 * grow, and none lies in the future. A row trigger on INSERT refuses an event earlier than the
 * event at position − 1 of its chain (rows inserted earlier by the same statement are visible to
 * it, so a multi-row append is checked event by event) or later than clock_timestamp() plus
 * MAX_CLOCK_SKEW. It costs one lookup on the (chain_id, position) unique index per event.
 *
 * The function plans that lookup for each row (plan_cache_mode = force_custom_plan): PL/pgSQL
 * otherwise keeps a generic plan per connection, and one made while the table was small (a new
 * database, before autovacuum's first ANALYZE) scans the whole table for every inserted row. That was
 * measured at 10x the cost of a 500-event append on a fresh database, growing with the chain.
 */
/** A timestamptz in the API's form (UTC, milliseconds), whatever the session's TimeZone. */
const iso = (value: string): string => `to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** audit_event_time_order as this migration creates it (1765700000000 replaces it; its down() restores this). */
export const TIME_ORDER_1764000000000 = `
      CREATE FUNCTION audit_event_time_order() RETURNS trigger LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
      DECLARE
        previous timestamptz;
      BEGIN
        IF NEW."timestamp" > clock_timestamp() + interval '${MAX_CLOCK_SKEW}' THEN
          RAISE EXCEPTION 'event %: timestamp % is later than the database clock allows (% plus ${MAX_CLOCK_SKEW})',
            NEW.id, ${iso('NEW."timestamp"')}, ${iso('clock_timestamp()')} USING ERRCODE = 'check_violation';
        END IF;
        SELECT e."timestamp" INTO previous FROM events e WHERE e.chain_id = NEW.chain_id AND e.position = NEW.position - 1;
        IF previous IS NOT NULL AND NEW."timestamp" < previous THEN
          RAISE EXCEPTION 'event %: timestamp % is earlier than %, the timestamp of position % of its chain',
            NEW.id, ${iso('NEW."timestamp"')}, ${iso('previous')}, NEW.position - 1 USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;

export class TimestampOrder1764000000000 implements MigrationInterface {
  name = 'TimestampOrder1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(TIME_ORDER_1764000000000);
    await q.query(
      `CREATE TRIGGER trg_events_time_order BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION audit_event_time_order()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_events_time_order ON events`);
    await q.query(`DROP FUNCTION audit_event_time_order()`);
  }
}
