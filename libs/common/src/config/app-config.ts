import { isIP, isIPv4 } from 'node:net';
import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { DatabaseUrlError, parseDatabaseUrl } from './database-url';
import { MAX_ACCOUNT_NAME_LENGTH, MAX_API_KEY_LENGTH, MIN_API_KEY_LENGTH, MIN_BOOTSTRAP_KEY_LENGTH } from '../limits';

/** The validated environment (docs/contract.md §1). Loading it fails fast with a readable message. */
export class AppConfig {
  port = 3000;
  host = '0.0.0.0';
  /** postgres://… or null for the embedded database under dataDir. */
  databaseUrl: string | null = null;
  databasePoolSize = 10;
  /**
   * A streaming replica of DATABASE_URL's database (docs/contract.md §21), or null: reads over many
   * events go there while its replay lag is under readReplicaMaxLagMs.
   */
  databaseReadUrl: string | null = null;
  /** The replay lag beyond which those reads go to the primary instead, in milliseconds. */
  readReplicaMaxLagMs = 1000;
  /**
   * `run`: pending migrations are applied at start (under an advisory lock: one instance migrates).
   * `check`: none is applied, and the service refuses to start while any is pending: for a role
   * that owns nothing and may not change the schema (docs/verification.md §7).
   */
  databaseMigrations: DatabaseMigrations = 'run';
  dataDir = resolve('data');
  /** `account:key[:scopes]` entries of API_KEYS. */
  bootstrapKeys: BootstrapKey[] = [];
  rateLimitPerSecond = 1000;
  /** Presented keys one client address may have refused per minute before it gets 429 (0: no limit). */
  authFailuresPerMinute = 60;
  /** Group commit: most events one append transaction carries, and most waiting in memory. */
  appendBatchSize = 500;
  appendQueueLimit = 20000;
  /** Most bytes (of actor, action, resource, chain name and context as JSON text) waiting in memory. */
  appendQueueLimitBytes = 32 * 1024 * 1024;
  /** Append transactions in flight at once, each on other chains (at most the pool size − 1). */
  appendConcurrency = 4;
  /** Whole-chain verification reads positions in windows of this many, two windows ahead. */
  verifyPageSize = 2000;
  /** Worker threads that read and hash those windows on their own connections (PostgreSQL only). */
  verifyWorkers = Math.min(8, availableParallelism());
  /** Whole-chain verifications one account may run at once on an instance (more: 429). */
  verifyConcurrency = 2;
  /** Idempotency-Key records are deleted this long after their claim (docs/contract.md §7: at least 24 h). */
  idempotencyRetentionHours = 24;
  /** An export whose client takes no byte for this long (its buffers full) is aborted and its snapshot released. */
  exportStallTimeoutSeconds = 30;
  /** More events than this matching an erasure's query is 422 NOT_ERASABLE (docs/contract.md §17). */
  erasureMaxEvents = 100_000;
  /** Live tail (docs/contract.md §13): open streams per account per instance (more: 429). */
  streamsPerAccount = 10;
  /** How often an open stream asks the database for newly committed events, in milliseconds. */
  streamPollMilliseconds = 250;
  /** A stream with nothing to send writes a comment this often, in seconds. */
  streamHeartbeatSeconds = 15;
  /** A stop (SIGTERM, SIGINT) ends within this: requests still open near it (exports) are cut, the pools closed. */
  shutdownTimeoutSeconds = 25;
  /** Exports one account may have in flight at once on an instance (more: 429). */
  exportsPerAccount = 2;
  /** Exports in flight at once on an instance, all accounts together (more: 429): half the pool by default. */
  exportsPerInstance = 5;
  /** Reads over many events (list, export, statistics) one account may have in flight on an instance (more: 429, docs/contract.md §8). */
  readsPerAccount = 4;
  /** Each statement of those reads is cancelled in the database past this (422 QUERY_TOO_EXPENSIVE); fractions allowed. */
  queryTimeoutSeconds = 15;
  signingKey: string | null = null;
  /** SIGNING_KEY_FILE: an existing key file outside DATA_DIR (absolute); SIGNING_KEY wins over it. */
  signingKeyFile: string | null = null;
  /** Verifier keys of earlier signing keys: stored checkpoints they signed still verify. */
  retiredVerifierKeys: string[] = [];
  /** GET /metrics listens here, never on the API port (docs/contract.md §11); port 0: no metrics. */
  metricsPort = 9464;
  metricsHost = '127.0.0.1';
  logLevel: LogLevel = 'info';
  /** `pretty`: one human-readable line per entry instead of JSON (development). */
  logFormat: 'json' | 'pretty' = 'json';
  /** Express's `trust proxy`: which hops of X-Forwarded-For to believe for the client address (false: the TCP peer). */
  trustProxy: TrustProxy = false;
  /** Retention (docs/contract.md §14): the sweep runs this often, in seconds (0: only on demand). */
  retentionSweepSeconds = 3600;
  /** Shifts the sweep's idea of now into the future, for tests; never changes event timestamps. */
  retentionClockOffsetSeconds = 0;
  /**
   * A legal hold lifted less than this many hours ago (on the sweep's clock) still stops a prune
   * (docs/contract.md §14), so lifting, pruning and restoring a hold cannot happen unseen in one step. The
   * database keeps the value it enforces (retention_policy); a service running as the schema's owner
   * writes this one there at start.
   */
  holdReleaseDelayHours = 24;
  /** The `_audit` chain's effective retention is never below this many days (docs/contract.md §14). */
  auditMinRetentionDays = 365;
  /**
   * After a sweep that deleted events: `auto` (`full` when what remains is small next to what was
   * deleted and the tables small enough, else `plain`: VACUUM_FULL_MAX_*), `plain` VACUUM (ANALYZE)
   * (space reused, appends go on), `full` (VACUUM FULL: space returned to the system, but events and
   * merkle_nodes are locked while their retained rows are rewritten), or `off` (autovacuum's).
   */
  retentionVacuum: RetentionVacuum = 'auto';
  /**
   * SECRETS_KEY: base64 of 32 bytes, the AES-256-GCM key of stored stream credentials (docs/contract.md
   * §16); null: generated into DATA_DIR once, like the signing key.
   */
  secretsKey: string | null = null;
  /** Streams (docs/contract.md §16): destinations one account may have (more: 409). */
  destinationsPerAccount = 10;
  /** Destinations may send to loopback, private, link-local and unique-local addresses (tests, on-premises receivers). */
  streamAllowPrivateNetworks = false;
  /** A destination failing for this many hours is paused by the service. */
  streamPauseAfterHours = 72;
  /** STREAM_DELIVERY=false: this instance delivers no destination (the others sharing its database do); its API still manages them. */
  streamDelivery = true;
  /**
   * Delivery engine: how often it claims and renews destination leases. A lease lasts three of these and the
   * others claim every one: a stopped instance's destinations move within four (at most 28 s, docs/contract.md §16: 30 s).
   */
  streamLeaseSeconds = 5;
  /** The checkpoint log (docs/contract.md §18): a log checkpoint is signed this often when the log grew. */
  witnessIntervalSeconds = 10;
  checkpointLogOrigin = 'audit-trail/checkpoint-log';
  /** WITNESSES: `<cosignature/v1 verifier key>@<url>`, comma-separated (the key's id is checked at start). */
  witnesses: WitnessConfig[] = [];
  /** Valid cosignatures a log checkpoint needs to witness what it includes; default: every listed witness. */
  witnessQuorum = 0;
  /** Each add-checkpoint request is abandoned past this. */
  witnessTimeoutSeconds = 5;
}

export interface WitnessConfig {
  /** The witness's cosignature/v1 verifier key, `<name>+<hex key id>+<base64>`. */
  key: string;
  /** Its tlog-witness prefix URL: requests go to `<url>/add-checkpoint`. */
  url: string;
}

export const DATABASE_MIGRATIONS = ['run', 'check'] as const;
export type DatabaseMigrations = (typeof DATABASE_MIGRATIONS)[number];

export const RETENTION_VACUUMS = ['auto', 'plain', 'full', 'off'] as const;
export type RetentionVacuum = (typeof RETENTION_VACUUMS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** true: every hop; a number: that many hops; a list: these proxies' addresses or CIDRs (or loopback, linklocal, uniquelocal). */
export type TrustProxy = boolean | number | string[];

/**
 * `ingest` appends events; `read` is every other read; `admin` manages the key's own account,
 * `operator` every account (docs/contract.md §1, §12). Which route needs which: each handler's
 * @RequireScopes (libs/auth route-scopes.ts).
 */
export type Scope = 'ingest' | 'read' | 'admin' | 'operator';
export const SCOPES: readonly Scope[] = ['ingest', 'read', 'admin', 'operator'];
/** The reserved account operator keys belong to (and whose `_audit` chain records account changes). */
export const SYSTEM_ACCOUNT = 'system';
/** Where a key came from: API_KEYS (followed at every start), the key CLI or the HTTP API. */
export type KeyOrigin = 'config' | 'cli' | 'api';

/** Why `scopes` cannot be given to a key of `account`, or null when they can (`operator` is for `system` only). */
export function scopesProblem(account: string, scopes: readonly Scope[]): string | null {
  return scopes.includes('operator') && account !== SYSTEM_ACCOUNT
    ? `the operator scope is only for keys of the account '${SYSTEM_ACCOUNT}'`
    : null;
}

/** Account names of API_KEYS and of `cli keys`. */
export const ACCOUNT_NAME = new RegExp(`^[A-Za-z0-9._-]{1,${MAX_ACCOUNT_NAME_LENGTH}}$`);
/** ACCOUNT_NAME in words, for error messages. */
export const ACCOUNT_NAME_TEXT = `1-${MAX_ACCOUNT_NAME_LENGTH} characters of [A-Za-z0-9._-]`;

/** Scopes joined by `+` (`ingest`, `read`, `admin`, `operator`), e.g. `ingest+read`, or null for anything else. */
export function parseScopes(text: string): Scope[] | null {
  const scopes = [...new Set(text.split('+'))];
  return scopes.every((s): s is Scope => (SCOPES as readonly string[]).includes(s)) ? scopes : null;
}

export interface BootstrapKey {
  account: string;
  key: string;
  scopes: Scope[];
  /** The key's name in lists (the console's Keys page); `API_KEYS` when not given. */
  name?: string;
}

export function loadAppConfig(env: NodeJS.ProcessEnv): AppConfig {
  const config = new AppConfig();
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  /** A decimal number of seconds, to the millisecond (PostgreSQL's timeouts count milliseconds). */
  const seconds = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = /^\d+(\.\d{1,3})?$/.test(raw) ? Number(raw) : NaN;
    if (!(value >= min && value <= max)) {
      problems.push(`${name} must be a number of seconds from ${min} to ${max}, at most 3 decimals (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  /** One of `values` (a problem for anything else), or `fallback` when unset. */
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const raw = env[name];
    if (!raw) return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${values.join(', ')}`);
    return fallback;
  };
  const bool = (name: string, fallback: boolean): boolean => oneOf(name, ['true', 'false'], `${fallback}`) === 'true';
  /** A postgres:// URL libpq would take, several hosts and target_session_attrs included (docs/contract.md §21): refused here, at start, if unusable. */
  const postgresUrl = (name: string): string | null => {
    const raw = env[name];
    if (!raw) return null;
    const problem = /^postgres(ql)?:\/\/[^\s]+$/.test(raw)
      ? databaseUrlProblem(raw, name)
      : `${name} must be a postgres:// URL`;
    if (problem) problems.push(problem);
    return problem ? null : raw;
  };
  config.port = int('PORT', config.port, 0, 65535);
  config.host = env.HOST || config.host;
  config.databasePoolSize = int('DATABASE_POOL_SIZE', config.databasePoolSize, 1, 200);
  config.rateLimitPerSecond = int('RATE_LIMIT_PER_SECOND', config.rateLimitPerSecond, 0, 1_000_000);
  config.authFailuresPerMinute = int('AUTH_FAILURES_PER_MINUTE', config.authFailuresPerMinute, 0, 1_000_000);
  config.appendBatchSize = int('APPEND_BATCH_SIZE', config.appendBatchSize, 1, 5000);
  config.appendQueueLimit = int('APPEND_QUEUE_LIMIT', config.appendQueueLimit, 1, 1_000_000);
  config.appendQueueLimitBytes = int('APPEND_QUEUE_LIMIT_BYTES', config.appendQueueLimitBytes, 1 << 20, 2 ** 40);
  config.appendConcurrency = int('APPEND_CONCURRENCY', config.appendConcurrency, 1, 64);
  config.verifyPageSize = int('VERIFY_PAGE_SIZE', config.verifyPageSize, 1, 50_000);
  config.verifyWorkers = int('VERIFY_WORKERS', config.verifyWorkers, 0, 64);
  config.verifyConcurrency = int('VERIFY_CONCURRENCY', config.verifyConcurrency, 1, 64);
  config.idempotencyRetentionHours = int('IDEMPOTENCY_RETENTION_HOURS', config.idempotencyRetentionHours, 24, 24 * 366);
  config.exportStallTimeoutSeconds = int('EXPORT_STALL_TIMEOUT_SECONDS', config.exportStallTimeoutSeconds, 1, 3600);
  config.erasureMaxEvents = int('ERASURE_MAX_EVENTS', config.erasureMaxEvents, 1, 1_000_000);
  config.streamsPerAccount = int('STREAMS_PER_ACCOUNT', config.streamsPerAccount, 1, 1000);
  config.streamPollMilliseconds = int('STREAM_POLL_MILLISECONDS', config.streamPollMilliseconds, 20, 5000);
  config.streamHeartbeatSeconds = int('STREAM_HEARTBEAT_SECONDS', config.streamHeartbeatSeconds, 1, 15);
  config.shutdownTimeoutSeconds = int('SHUTDOWN_TIMEOUT_SECONDS', config.shutdownTimeoutSeconds, 2, 3600);
  config.exportsPerAccount = int('EXPORTS_PER_ACCOUNT', config.exportsPerAccount, 1, 1000);
  config.exportsPerInstance = int(
    'EXPORTS_PER_INSTANCE',
    Math.max(1, Math.floor(config.databasePoolSize / 2)),
    1,
    1000,
  );
  config.readsPerAccount = int('READS_PER_ACCOUNT', config.readsPerAccount, 1, 1000);
  config.queryTimeoutSeconds = seconds('QUERY_TIMEOUT_SECONDS', config.queryTimeoutSeconds, 0.001, 3600);
  config.retentionSweepSeconds = int('RETENTION_SWEEP_SECONDS', config.retentionSweepSeconds, 0, 366 * 86400);
  config.retentionClockOffsetSeconds = int(
    'RETENTION_CLOCK_OFFSET_SECONDS',
    config.retentionClockOffsetSeconds,
    0,
    200 * 366 * 86400,
  );
  config.holdReleaseDelayHours = int('HOLD_RELEASE_DELAY_HOURS', config.holdReleaseDelayHours, 0, 8784);
  config.auditMinRetentionDays = int('AUDIT_MIN_RETENTION_DAYS', config.auditMinRetentionDays, 1, 36500);
  if (env.SECRETS_KEY) config.secretsKey = env.SECRETS_KEY;
  config.destinationsPerAccount = int('DESTINATIONS_PER_ACCOUNT', config.destinationsPerAccount, 1, 1000);
  config.streamPauseAfterHours = int('STREAM_PAUSE_AFTER_HOURS', config.streamPauseAfterHours, 1, 24 * 366);
  config.streamLeaseSeconds = int('STREAM_LEASE_SECONDS', config.streamLeaseSeconds, 1, 7);
  config.streamDelivery = bool('STREAM_DELIVERY', config.streamDelivery);
  config.streamAllowPrivateNetworks = bool('STREAM_ALLOW_PRIVATE_NETWORKS', config.streamAllowPrivateNetworks);
  config.databaseUrl = postgresUrl('DATABASE_URL') ?? config.databaseUrl;
  if (env.DATABASE_READ_URL && !config.databaseUrl)
    problems.push('DATABASE_READ_URL needs DATABASE_URL (the embedded database has no replica)');
  else config.databaseReadUrl = postgresUrl('DATABASE_READ_URL') ?? config.databaseReadUrl;
  config.readReplicaMaxLagMs = int('READ_REPLICA_MAX_LAG_MS', config.readReplicaMaxLagMs, 0, 3_600_000);
  config.databaseMigrations = oneOf('DATABASE_MIGRATIONS', DATABASE_MIGRATIONS, config.databaseMigrations);
  if (env.DATA_DIR) config.dataDir = isAbsolute(env.DATA_DIR) ? env.DATA_DIR : resolve(env.DATA_DIR);
  config.bootstrapKeys = parseApiKeys(env.API_KEYS ?? '', problems);
  config.signingKey = env.SIGNING_KEY || null;
  if (env.SIGNING_KEY_FILE) {
    if (/[\0\n\r]/.test(env.SIGNING_KEY_FILE) || env.SIGNING_KEY_FILE.endsWith('/'))
      problems.push('SIGNING_KEY_FILE must be the path of a file');
    else config.signingKeyFile = resolve(env.SIGNING_KEY_FILE);
  }
  config.metricsPort = int('METRICS_PORT', config.metricsPort, 0, 65535);
  config.metricsHost = env.METRICS_HOST || config.metricsHost;
  config.logLevel = oneOf('LOG_LEVEL', LOG_LEVELS, config.logLevel);
  config.retentionVacuum = oneOf('RETENTION_VACUUM', RETENTION_VACUUMS, config.retentionVacuum);
  config.logFormat = oneOf('LOG_FORMAT', ['json', 'pretty'], config.logFormat);
  if (env.TRUST_PROXY) config.trustProxy = parseTrustProxy(env.TRUST_PROXY, problems);
  config.witnessIntervalSeconds = int('WITNESS_INTERVAL_SECONDS', config.witnessIntervalSeconds, 1, 86400);
  config.witnessTimeoutSeconds = int('WITNESS_TIMEOUT_SECONDS', config.witnessTimeoutSeconds, 1, 300);
  if (env.CHECKPOINT_LOG_ORIGIN !== undefined) {
    if (/^[^\s+][^\n\r]*$/.test(env.CHECKPOINT_LOG_ORIGIN) && !/[\u0000-\u001f]/.test(env.CHECKPOINT_LOG_ORIGIN))
      config.checkpointLogOrigin = env.CHECKPOINT_LOG_ORIGIN;
    else problems.push('CHECKPOINT_LOG_ORIGIN must be one non-empty line without control characters');
  }
  config.witnesses = parseWitnesses(env.WITNESSES ?? '', problems);
  config.witnessQuorum = int('WITNESS_QUORUM', config.witnesses.length, 0, config.witnesses.length);
  if (config.witnesses.length > 0 && config.witnessQuorum === 0) problems.push('WITNESS_QUORUM must be at least 1');
  config.retiredVerifierKeys = (env.RETIRED_VERIFIER_KEYS ?? '').split(/[\s,]+/).filter((key) => key.length > 0);
  if (problems.length > 0) throw new Error(`Invalid configuration:\n- ${problems.join('\n- ')}`);
  return config;
}

/**
 * WITNESSES: comma-separated `<verifier key>@<url>`. The key's shape is checked here (name, 8 hex
 * digits, base64 of a type 0x04 key of 32 bytes); its key id against the name and key at start
 * (libs/hashing parseCosignatureVerifierKey), libs/common not depending on libs/hashing.
 */
export function parseWitnesses(raw: string, problems: string[]): WitnessConfig[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const witnesses: WitnessConfig[] = [];
  entries.forEach((entry, index) => {
    // base64 has no '@': the first '@' after the key's second '+' ends the key (a name may hold one).
    const match = /^([^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+={0,2})@(\S+)$/.exec(entry);
    const typed = match ? Buffer.from(match[1]!.split('+').slice(2).join('+'), 'base64') : null;
    let url: URL | null = null;
    try {
      url = match ? new URL(match[2]!) : null;
    } catch {
      url = null;
    }
    if (!match || !typed || typed.length !== 33 || typed[0] !== 0x04) {
      problems.push(
        `WITNESSES entry ${index + 1} must be <verifier key>@<url>, the key a cosignature/v1 one (<name>+<8 hex digits>+<base64 of 0x04 and a 32-byte Ed25519 key>)`,
      );
    } else if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
      problems.push(`WITNESSES entry ${index + 1}: the URL must be http:// or https:// without query or fragment`);
    } else if (witnesses.some((w) => w.key === match[1])) {
      problems.push(`WITNESSES entry ${index + 1}: the key is listed twice`);
    } else {
      witnesses.push({ key: match[1]!, url: match[2]!.replace(/\/+$/, '') });
    }
  });
  return witnesses;
}

/** What an API key can look like (ours are `ats_…`; API_KEYS may bring others): anything else is no key. */
export const API_KEY_TEXT = new RegExp(String.raw`^[\x21-\x7e]{${MIN_API_KEY_LENGTH},${MAX_API_KEY_LENGTH}}$`);

export function parseApiKeys(raw: string, problems: string[]): BootstrapKey[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .flatMap((entry, index) => {
      const [account = '', key = '', scopes = 'ingest+read', ...rest] = entry.split(':');
      const parsedScopes = parseScopes(scopes);
      if (parsedScopes !== null && scopesProblem(account, parsedScopes) !== null) {
        problems.push(`API_KEYS entry ${index + 1}: ${scopesProblem(account, parsedScopes)}`);
        return [];
      }
      if (rest.length > 0 || !ACCOUNT_NAME.test(account) || !API_KEY_TEXT.test(key) || parsedScopes === null) {
        problems.push(
          `API_KEYS entry ${index + 1} must be account:key[:scopes] (account ${ACCOUNT_NAME_TEXT}, key ${MIN_API_KEY_LENGTH}-${MAX_API_KEY_LENGTH} printable characters without ':' or ',', scopes among ingest, read, admin, operator joined by +)`,
        );
        return [];
      }
      if (key.length < MIN_BOOTSTRAP_KEY_LENGTH) {
        problems.push(
          `API_KEYS entry ${index + 1} (account ${account}): the key must be at least ${MIN_BOOTSTRAP_KEY_LENGTH} characters`,
        );
        return [];
      }
      return [{ account, key, scopes: parsedScopes }];
    });
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY as Express's `trust proxy` takes it: true/false, a hop count, or addresses/CIDRs (checked here, not at the first request). */
export function parseTrustProxy(raw: string, problems: string[]): TrustProxy {
  const text = raw.trim();
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^\d{1,3}$/.test(text)) return Number(text);
  const entries = text.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !PROXY_NAMES.includes(entry) && !isAddressOrCidr(entry));
  if (bad.length === 0) return entries;
  problems.push(
    `TRUST_PROXY must be true, false, a hop count, or comma-separated addresses/CIDRs (or loopback, linklocal, uniquelocal); not ${bad.map((b) => `"${b}"`).join(', ')}`,
  );
  return false;
}

function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (version === 4 && isIPv4(prefix)) return true; // a netmask, as proxy-addr accepts
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/** Why the URL of `name` cannot be used (its hosts, ports, encoding, target_session_attrs), or null. */
function databaseUrlProblem(url: string, name = 'DATABASE_URL'): string | null {
  try {
    parseDatabaseUrl(url, name);
    return null;
  } catch (error) {
    if (error instanceof DatabaseUrlError) return error.message;
    throw error;
  }
}
