import { declareFunction, declareTrigger, refusals } from './declare';

/*
 * Appends: the rules that make the events, chains, checkpoints and logs append-only, and a chain's
 * head move only forward over what was appended (threat model P2). The current text of each function
 * and trigger: the schema-drift check (npm run migration:check) holds the database to it.
 */

/**
 * P2: history changes only through an append, a prune or an erasure. Run by the statement triggers
 * below: UPDATE, DELETE and TRUNCATE of the append-only tables are refused for every role, even a
 * statement that matches no row.
 */
export const audit_reject_change = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION '% on % is not allowed: the audit trail is append-only', TG_OP, TG_TABLE_NAME
      USING ERRCODE = 'insufficient_privilege';
  END $$`,
);

/**
 * P2: a chain begins empty (position 0, the genesis hash, no time), so its first event links to the genesis.
 */
export const audit_chain_starts_empty = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_chain_starts_empty() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.last_position <> 0 OR NEW.last_hash <> decode(repeat('00', 32), 'hex') OR NEW.last_timestamp IS NOT NULL THEN
      RAISE EXCEPTION 'chain %: a new chain starts at position 0 with the genesis hash', NEW.id
        USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END $$`,
);

/**
 * P2: a chain's head moves only forward, by exactly the events appended for it in the same transaction:
 * the new position is the old one plus the events above it, none lies beyond it, the first new event
 * links to the old head, and the new head is the hash and time of the event at the new position. A
 * chain's id, account, name and creation time never change. Its lookups go through the unique
 * (chain_id, position) index whatever the statistics (migration 1765700000000 says why).
 */
export const audit_chain_head_forward = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  DECLARE
    appended bigint;
    beyond bigint;
    head record;
    first_link bytea;
  BEGIN
    IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.name <> OLD.name OR NEW.created_at <> OLD.created_at THEN
      RAISE EXCEPTION 'chain %: id, account, name and creation time never change', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.last_position = OLD.last_position
       AND NEW.last_hash = OLD.last_hash AND NEW.last_timestamp IS NOT DISTINCT FROM OLD.last_timestamp THEN
      RETURN NEW;
    END IF;
    IF NEW.last_position <= OLD.last_position THEN
      RAISE EXCEPTION 'chain %: the head cannot move from position % to %', OLD.id, OLD.last_position, NEW.last_position
        USING ERRCODE = 'check_violation';
    END IF;
    SELECT count(*) FILTER (WHERE e.position <= NEW.last_position), count(*) FILTER (WHERE e.position > NEW.last_position)
      INTO appended, beyond
      FROM (SELECT e.position FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position
             ORDER BY e.position) e;
    IF appended <> NEW.last_position - OLD.last_position OR beyond <> 0 THEN
      RAISE EXCEPTION 'chain %: the head must move forward by exactly the % event(s) appended, not to position %',
        OLD.id, appended + beyond, NEW.last_position USING ERRCODE = 'check_violation';
    END IF;
    SELECT e.hash, e."timestamp" INTO head FROM events e WHERE e.chain_id = NEW.id
       AND e.position BETWEEN NEW.last_position AND NEW.last_position ORDER BY e.position LIMIT 1;
    SELECT e.previous_hash INTO first_link FROM events e WHERE e.chain_id = NEW.id
       AND e.position BETWEEN OLD.last_position + 1 AND OLD.last_position + 1 ORDER BY e.position LIMIT 1;
    IF head.hash IS DISTINCT FROM NEW.last_hash OR head."timestamp" IS DISTINCT FROM NEW.last_timestamp
       OR first_link IS DISTINCT FROM OLD.last_hash THEN
      RAISE EXCEPTION 'chain %: the new head must be the hash and time of the event at position %, linked to the old head',
        OLD.id, NEW.last_position USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END $$`,
);

/**
 * P2 (docs/contract.md §8): along a chain timestamps never decrease, and none is more than 5 s ahead of
 * the database's clock (hosts kept by NTP agree within milliseconds; a forged future timestamp, which
 * every later event of the chain would inherit, is refused). A multi-row append is checked row by row.
 */
export const audit_event_time_order = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_event_time_order() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
  DECLARE
    previous timestamptz;
  BEGIN
    IF NEW."timestamp" > clock_timestamp() + interval '5 seconds' THEN
      RAISE EXCEPTION 'event %: timestamp % is later than the database clock allows (% plus 5 seconds)',
        NEW.id, to_char(NEW."timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') USING ERRCODE = 'check_violation';
    END IF;
    SELECT e."timestamp" INTO previous FROM events e WHERE e.chain_id = NEW.chain_id
       AND e.position BETWEEN NEW.position - 1 AND NEW.position - 1 ORDER BY e.position LIMIT 1;
    IF previous IS NOT NULL AND NEW."timestamp" < previous THEN
      RAISE EXCEPTION 'event %: timestamp % is earlier than %, the timestamp of position % of its chain',
        NEW.id, to_char(NEW."timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(previous AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NEW.position - 1 USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END $$`,
);

/** A new chain starts empty. */
export const trgChainsStartEmpty = declareTrigger(
  `CREATE TRIGGER trg_chains_start_empty BEFORE INSERT ON public.chains FOR EACH ROW EXECUTE FUNCTION audit_chain_starts_empty()`,
);

/** A head moves only forward over what was appended. */
export const trgChainsHeadForward = declareTrigger(
  `CREATE TRIGGER trg_chains_head_forward BEFORE UPDATE ON public.chains FOR EACH ROW EXECUTE FUNCTION audit_chain_head_forward()`,
);

/** Every inserted event is in time order. */
export const trgEventsTimeOrder = declareTrigger(
  `CREATE TRIGGER trg_events_time_order BEFORE INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION audit_event_time_order()`,
);

/**
 * The append-only tables: what each refuses outright. Where the refusal is `always` it fires under
 * `session_replication_role = replica` too. Events' DELETE and UPDATE, and Merkle nodes' DELETE, are
 * not here: they are checks of what a prune or an erasure changed (retention.ts, erasure.ts).
 */
export const appendOnlyRefusals = [
  ...refusals('events', ['TRUNCATE']),
  ...refusals('chains', ['DELETE', 'TRUNCATE']),
  ...refusals('checkpoints', ['UPDATE', 'DELETE', 'TRUNCATE']),
  ...refusals('merkle_nodes', ['UPDATE', 'TRUNCATE']),
  ...refusals('retention_log', ['UPDATE', 'DELETE', 'TRUNCATE'], 'always'),
  ...refusals('retention_policy', ['DELETE', 'TRUNCATE'], 'always'),
  ...[
    'checkpoint_log_leaves',
    'checkpoint_log_nodes',
    'checkpoint_log_checkpoints',
    'checkpoint_log_cosignatures',
  ].flatMap((table) => refusals(table, ['UPDATE', 'DELETE', 'TRUNCATE'], 'always')),
  ...refusals('erasure_events', ['UPDATE', 'DELETE', 'TRUNCATE'], 'always'),
  ...refusals('erasures', ['UPDATE', 'DELETE', 'TRUNCATE'], 'always'),
  // Action schema versions (docs/contract.md §19): a deletion is a new version, never a change.
  ...refusals('action_schemas', ['UPDATE', 'DELETE', 'TRUNCATE'], 'always'),
];

export const FUNCTIONS = [
  audit_reject_change,
  audit_chain_starts_empty,
  audit_chain_head_forward,
  audit_event_time_order,
];

export const TRIGGERS = [trgChainsStartEmpty, trgChainsHeadForward, trgEventsTimeOrder, ...appendOnlyRefusals];
