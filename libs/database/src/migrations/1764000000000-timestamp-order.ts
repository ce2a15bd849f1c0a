import { MigrationInterface, QueryRunner } from 'typeorm';
import { TIME_ORDER_1764000000000 } from './functions/audit-event-time-order';

/**
 * Time order of events (docs/contract.md §8): within a chain, timestamps never decrease as positions
 * grow, and none lies in the future. A row trigger on INSERT refuses an event earlier than the
 * event at position − 1 of its chain (rows inserted earlier by the same statement are visible to
 * it, so a multi-row append is checked event by event) or later than clock_timestamp() plus 5 seconds
 * (the service takes timestamps from its host's clock; hosts kept by NTP agree within milliseconds, so
 * 5 s tolerates any honest skew while a forged future timestamp (2099), which every later event of the
 * chain would inherit, is refused). It costs one lookup on the (chain_id, position) unique index per event.
 *
 * The function plans that lookup for each row (plan_cache_mode = force_custom_plan): PL/pgSQL
 * otherwise keeps a generic plan per connection, and one made while the table was small (a new
 * database, before autovacuum's first ANALYZE) scans the whole table for every inserted row. That was
 * measured at 10x the cost of a 500-event append on a fresh database, growing with the chain.
 */
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
