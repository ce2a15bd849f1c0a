/** The input limits of the API, named once (docs/contract.md §4, §8). */

/** A request body, in bytes (413 beyond). */
export const MAX_BODY_BYTES = 64 * 1024;
/** An event's `context`, serialized, in bytes. */
export const MAX_CONTEXT_BYTES = 32 * 1024;
/** An event's `context`, in levels of objects and arrays (the context object itself is level 1). */
export const MAX_CONTEXT_DEPTH = 32;
/**
 * Any request body, in levels, checked while it is parsed so nothing recursive ever sees deeper
 * input. Above what a valid body needs (a context inside its envelope), so a context that is too
 * deep is still answered on `context` with its own limit.
 */
export const MAX_BODY_DEPTH = 2 * MAX_CONTEXT_DEPTH;
/** An event's `actor` and `action`, in characters. */
export const MAX_ACTOR_LENGTH = 256;
export const MAX_ACTION_LENGTH = 256;
/** An event's `resource`, in characters. */
export const MAX_RESOURCE_LENGTH = 512;
/** A chain's name, in characters (the rest of the rule is CHAIN_NAME in ids.ts). */
export const MAX_CHAIN_NAME_LENGTH = 128;
/** An Idempotency-Key, in characters (the rest of the rule is IDEMPOTENCY_KEY in ids.ts). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** A caller's X-Request-Id, in characters (the rest of the rule is REQUEST_ID in ids.ts). */
export const MAX_REQUEST_ID_LENGTH = 128;
/** `limit` of a list endpoint: its default and its largest value. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/** A `cursor`, in characters: longer than any we issue, so anything longer is refused unread. */
export const MAX_CURSOR_LENGTH = 200;
/** GET /v1/events/export: at most this many events (422 EXPORT_LIMIT_EXCEEDED beyond). */
export const EXPORT_LIMIT = 10_000;
/** An account's name (API_KEYS, `cli keys`), in characters. */
export const MAX_ACCOUNT_NAME_LENGTH = 64;
/** What an API key may be (ours are 47 characters; API_KEYS may bring others), in characters. */
export const MIN_API_KEY_LENGTH = 16;
export const MAX_API_KEY_LENGTH = 256;
/** A secret given in API_KEYS, in characters (docs/contract.md §1/§12): the start is refused below. */
export const MIN_BOOTSTRAP_KEY_LENGTH = 24;

/** POST /v1/events/batch (docs/contract.md §9): at most this many events per request … */
export const MAX_BATCH_EVENTS = 1000;
/** … and a body of at most this many bytes (413 beyond). */
export const MAX_BATCH_BODY_BYTES = 8 * 1024 * 1024;

/** A key's `name` (docs/contract.md §12), in characters. */
export const MAX_KEY_NAME_LENGTH = 100;
/** POST …/keys/:keyId/rotate: the old key keeps working this long at most, and by default. */
export const MAX_ROTATION_OVERLAP_SECONDS = 86_400;
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 3_600;
/**
 * What parsing, validating, hashing and storing a body costs grows with its values (object members
 * and array items, at any depth), not only its bytes (issue 18 item 10: 1,000 items of 600 small
 * members each, 6–8 MB, cost seconds of CPU). Any body holds at most this many, counted before it
 * is parsed (400 on `body` beyond): 100 per event of a full batch, and more than a 64 KiB body can hold.
 */
export const MAX_BODY_VALUES = 100_000;
/** An event's `context` holds at most this many values (members and items at any depth; 400 on `context` beyond). */
export const MAX_CONTEXT_VALUES = 1_000;
/**
 * A compressed body (`Content-Encoding` gzip, deflate or br) may inflate to at most this many times
 * its size on the wire, or to MAX_BODY_BYTES whatever its size (413 beyond); inflated, it is held
 * to the endpoint's limit in bytes like any other.
 */
export const MAX_INFLATION_RATIO = 100;
/** Retention (docs/contract.md §14): days an account or a chain keeps its events, at most … */
export const MAX_RETENTION_DAYS = 36_500;
/** … and a legal hold's reason, in characters. */
export const MAX_LEGAL_HOLD_REASON_LENGTH = 512;
/**
 * The retention sweep deletes a chain's prefix in batches, one short transaction each that holds the
 * chain's lock (an append to that chain waits for the batch running, at most): each batch is sized
 * from the last one's duration to take about PRUNE_BATCH_MILLISECONDS (at most twice the last
 * size), within PRUNE_BATCH_MIN_EVENTS … PRUNE_BATCH_MAX_EVENTS, the first one the minimum.
 */
export const PRUNE_BATCH_MILLISECONDS = 20;
export const PRUNE_BATCH_MIN_EVENTS = 100;
export const PRUNE_BATCH_MAX_EVENTS = 10_000;
/**
 * … and after each batch the sweep pauses so that it holds the lock this share of the time (a pause
 * half as long as the batch at 2/3): appends waiting for the chain's lock take it in the pause (a
 * row lock's queue does not make a transaction that locks again at once wait its turn), and the
 * sweep leaves a share of its core to them.
 */
export const PRUNE_DUTY_CYCLE = 2 / 3;
/**
 * RETENTION_VACUUM=auto: after a sweep, VACUUM FULL (the space goes back to the system) only when
 * the events that remain are at most VACUUM_FULL_MAX_RETAINED_RATIO of those it deleted (the tables
 * are then mostly dead space, which plain VACUUM leaves in the file), and its exclusive lock, which
 * stops every append and read of the table, is short: it reads the whole old file and rewrites
 * what remains, so events and merkle_nodes (with their indexes) at most VACUUM_FULL_MAX_TABLE_BYTES
 * before, at most VACUUM_FULL_MAX_RETAINED_EVENTS remaining (docs/performance.md: 1.2 s for 1.26 GB
 * and 5,000 events). Its lock is waited for at most VACUUM_FULL_LOCK_WAIT_MILLISECONDS (a
 * long export would otherwise queue every append behind it); past that, plain VACUUM.
 */
export const VACUUM_FULL_MAX_RETAINED_RATIO = 0.25;
export const VACUUM_FULL_MAX_RETAINED_EVENTS = 100_000;
export const VACUUM_FULL_MAX_TABLE_BYTES = 2 * 1024 ** 3;
export const VACUUM_FULL_LOCK_WAIT_MILLISECONDS = 1000;

/** Erasures (docs/contract.md §17): the reason's length, and the most field paths one names. */
export const MAX_ERASURE_REASON_LENGTH = 512;
export const MAX_ERASURE_FIELDS = 64;
