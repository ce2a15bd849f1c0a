import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { AuthenticatedKey, lockActiveCaller, mayManage } from '@app/auth';
import { ACCOUNT_ID, AppConfig, AppError } from '@app/common';
import { ulidToUuid } from '@app/common/ids';
import {
  AccountsRepository,
  ActionSchemaRow,
  ActionSchemasRepository,
  ApiKeysRepository,
  AuditTrail,
  Db,
  keyActor,
  SchemaMode,
  TransactionRunner,
} from '@app/database';
import { BoundedReads } from '../reads/bounded-reads';
import { actionPatternProblem } from './action-pattern';
import { PreviewSchemaDto, PutSchemaDto } from './dto/put-schema.dto';
import { PreviewQuery } from './dto/preview.query';
import { PreviewExampleView, SchemaPreviewView, SchemaView, SchemaWithVersionsView } from './dto/schema.view';
import { compileSchemaCached, EventCheck, SchemaRefused } from './schema-compiler';
import { SchemaGate } from './schema-gate';
import { toSchemaView, toSchemaWithVersionsView } from './schema.mapper';

/**
 * Actions (and patterns) of one account with a schema at once: every instance keeps an appending
 * account's current schemas in memory (SchemaGate), so their number is bounded like their size.
 */
export const MAX_SCHEMA_ACTIONS = 200;
/**
 * Schema changes (PUT and DELETE, each an append-only version and an `_audit` entry) of one account
 * per UTC day, at most (docs/contract.md §19): beyond, 429 RATE_LIMITED until the next UTC midnight.
 */
export const MAX_SCHEMA_CHANGES_PER_DAY = 1_000;
/** A preview answers at most this many refused events. */
const PREVIEW_EXAMPLES = 10;
/** A preview's checks give the event loop back after this long (other requests run in between). */
const PREVIEW_SLICE_MS = 10;
/** `:n` of …/versions/:n. */
const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/;

/**
 * Action schemas (docs/contract.md §19): versions per account and action pattern, never changed or
 * removed (a DELETE adds a version whose schema is null). Who may (@RequireScopes(MANAGE)): an
 * admin for its own account, an operator for any; any other account, or one that does not exist,
 * is a 404. Each change re-checks the calling key inside its transaction (lockActiveCaller,
 * docs/contract.md §8), holds the account's row lock (versions numbered in commit order, so the
 * account's schema generation only grows) and records `schema.changed` in the account's `_audit`
 * chain in the same transaction; once committed, this instance's SchemaGate forgets the account's
 * schemas (other instances find the new generation in their next append's transaction).
 */
@Injectable()
export class SchemasService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly schemas: ActionSchemasRepository,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly trail: AuditTrail,
    private readonly gate: SchemaGate,
    private readonly reads: BoundedReads,
    private readonly config: AppConfig,
  ) {}

  async put(
    key: AuthenticatedKey,
    accountId: string,
    action: string,
    dto: PutSchemaDto,
  ): Promise<{ data: SchemaView }> {
    checkAction(action);
    if (!ACCOUNT_ID.test(accountId) || !mayManage(key, accountId)) notFound(`Account ${accountId}`);
    // Compiled under the account's admission: refused at once (429) while its reads are full.
    this.reads.refuseIfFull(accountId);
    compileOrRefuse(dto.schema);
    return this.change(key, accountId, action, async (tx) => {
      const [latest] = (await this.schemas.versions(accountId, action, tx)).slice(-1);
      if ((!latest || latest.schema === null) && (await this.schemas.currentCount(accountId, tx)) >= MAX_SCHEMA_ACTIONS)
        throw AppError.validation([
          {
            field: 'action',
            message: `the account has schemas for ${MAX_SCHEMA_ACTIONS} actions, the most it may have: delete one first`,
          },
        ]);
      return this.schemas.add({ accountId, action, mode: dto.mode, schema: dto.schema, keyId: key.keyId }, tx);
    });
  }

  /** Adds a version whose schema is null; 404 when the action has no schema (none, or deleted already). */
  async remove(key: AuthenticatedKey, accountId: string, action: string): Promise<{ data: SchemaView }> {
    checkAction(action);
    return this.change(key, accountId, action, async (tx) => {
      const [latest] = (await this.schemas.versions(accountId, action, tx)).slice(-1);
      if (!latest || latest.schema === null) notFound(`Schema ${action}`);
      return this.schemas.add({ accountId, action, mode: latest.mode, schema: null, keyId: key.keyId }, tx);
    });
  }

  /** Each action's latest version (deletions included), oldest action first. */
  async list(key: AuthenticatedKey, accountId: string): Promise<{ data: SchemaView[] }> {
    await this.visibleAccount(key, accountId);
    const { versions } = await this.schemas.latest(accountId);
    return { data: versions.map(toSchemaView) };
  }

  async get(key: AuthenticatedKey, accountId: string, action: string): Promise<{ data: SchemaWithVersionsView }> {
    checkAction(action);
    await this.visibleAccount(key, accountId);
    const versions = await this.schemas.versions(accountId, action);
    if (versions.length === 0) notFound(`Schema ${action}`);
    return { data: toSchemaWithVersionsView(versions) };
  }

  async version(key: AuthenticatedKey, accountId: string, action: string, n: string): Promise<{ data: SchemaView }> {
    checkAction(action);
    if (!VERSION_NUMBER.test(n))
      throw AppError.validation([{ field: 'n', message: 'n must be a version number (an integer from 1)' }]);
    await this.visibleAccount(key, accountId);
    const row = await this.schemas.version(accountId, action, Number(n));
    return { data: toSchemaView(row ?? notFound(`Schema ${action} version ${n}`)) };
  }

  /**
   * What `dto.schema` would refuse among the latest `limit` events whose action the pattern matches:
   * a bounded read (BoundedReads: READS_PER_ACCOUNT, QUERY_TIMEOUT_SECONDS); nothing is stored. The
   * checks (each at most CHECK_BUDGET_MS in patterns) give the event loop back every
   * PREVIEW_SLICE_MS, and all of them together may take QUERY_TIMEOUT_SECONDS (422 beyond).
   */
  async preview(
    key: AuthenticatedKey,
    accountId: string,
    action: string,
    dto: PreviewSchemaDto,
    { limit }: PreviewQuery,
  ): Promise<{ data: SchemaPreviewView }> {
    checkAction(action);
    await this.visibleAccount(key, accountId);
    // Compiled once the account is admitted (a slot of its bounded reads), never before.
    const { check, events } = await this.reads.run(accountId, async (db) => {
      const check = compileOrRefuse(dto.schema);
      return { check, events: await this.schemas.latestEvents(accountId, action, limit, db) };
    });
    let rejected = 0;
    const examples: PreviewExampleView[] = [];
    const deadline = performance.now() + this.config.queryTimeoutSeconds * 1000;
    let slice = performance.now();
    for (const event of events) {
      if (performance.now() - slice > PREVIEW_SLICE_MS) {
        await yieldToEventLoop();
        slice = performance.now();
        if (slice > deadline) {
          const timeoutSeconds = this.config.queryTimeoutSeconds;
          throw new AppError(
            'QUERY_TOO_EXPENSIVE',
            `Checking the events took longer than ${timeoutSeconds} s; lower limit or simplify the schema.`,
            { timeoutSeconds },
          );
        }
      }
      const violation = check({ actor: event.actor, resource: event.resource, context: event.context });
      if (!violation) continue;
      rejected++;
      if (examples.length < PREVIEW_EXAMPLES)
        examples.push({ eventId: event.id, field: violation.path, message: violation.message });
    }
    return { data: { checked: events.length, rejected, examples } };
  }

  /** A new version, made by `add` in a transaction that re-checks the caller, locks the account and records it. */
  private async change(
    key: AuthenticatedKey,
    accountId: string,
    action: string,
    add: (tx: Db) => Promise<ActionSchemaRow>,
  ): Promise<{ data: SchemaView }> {
    if (!ACCOUNT_ID.test(accountId) || !mayManage(key, accountId)) notFound(`Account ${accountId}`);
    const row = await this.transactions.run(async (tx) => {
      const by = await lockActiveCaller(this.apiKeys, key, tx);
      if (!mayManage(by, accountId) || !(await this.accounts.lockById(accountId, tx))) notFound(`Account ${accountId}`);
      await refusePastDailyChanges(accountId, tx);
      const added = await add(tx);
      await this.trail.record(
        accountId,
        [
          {
            actor: keyActor(key.keyId),
            action: 'schema.changed',
            resource: action,
            context: { action, version: added.version, mode: changeMode(added) },
          },
        ],
        tx,
      );
      return added;
    });
    this.gate.forget(accountId);
    return { data: toSchemaView(row) };
  }

  /** 404 unless the key manages the account and it exists. */
  private async visibleAccount(key: AuthenticatedKey, accountId: string): Promise<void> {
    if (!ACCOUNT_ID.test(accountId) || !mayManage(key, accountId) || !(await this.accounts.findById(accountId)))
      notFound(`Account ${accountId}`);
  }
}

/**
 * 429 once the account made MAX_SCHEMA_CHANGES_PER_DAY changes since the last UTC midnight (counted
 * under the account's row lock, so concurrent changes cannot pass it together).
 */
async function refusePastDailyChanges(accountId: string, tx: Db): Promise<void> {
  const [{ changes, wait }] = await tx.query<[{ changes: number; wait: number }]>(
    `SELECT count(*)::int AS changes,
            ceil(extract(epoch FROM (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '1 day') - now() AT TIME ZONE 'UTC'))::int AS wait
       FROM action_schemas
      WHERE account_id = $1 AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
    [ulidToUuid(accountId)],
  );
  if (changes < MAX_SCHEMA_CHANGES_PER_DAY) return;
  throw new AppError(
    'RATE_LIMITED',
    `This account changed its schemas ${MAX_SCHEMA_CHANGES_PER_DAY} times today (UTC), the most it may; retry after the next UTC midnight.`,
    { limit: MAX_SCHEMA_CHANGES_PER_DAY },
    { 'Retry-After': String(Math.max(1, wait)) },
  );
}

/** The `mode` an `_audit` entry records: the version's, or `deleted` for a deletion. */
function changeMode(row: ActionSchemaRow): SchemaMode | 'deleted' {
  return row.schema === null ? 'deleted' : row.mode;
}

function checkAction(action: string): void {
  const problem = actionPatternProblem(action);
  if (problem) throw AppError.validation([{ field: 'action', message: problem }]);
}

/** The compiled schema, or a 400 naming `schema` with what is wrong with it. */
function compileOrRefuse(schema: Record<string, unknown>): EventCheck {
  const nonFinite = nonFiniteAt(schema, 'schema');
  if (nonFinite !== null)
    throw AppError.validation([
      { field: nonFinite, message: `${nonFinite} must be a finite number (JSON text like 1e400 is out of range)` },
    ]);
  try {
    return compileSchemaCached(schema);
  } catch (error) {
    if (error instanceof SchemaRefused) throw AppError.validation([{ field: 'schema', message: error.message }]);
    throw error;
  }
}

/**
 * Where `value` holds a number JSON text gave out of range (1e400 parses as Infinity, which
 * PostgreSQL's jsonb would store as null), as `schema.enum[0]`, or null. Depth is bounded by the
 * body's own nesting limit.
 */
function nonFiniteAt(value: unknown, path: string): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : path;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = nonFiniteAt(item, `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, member] of Object.entries(value)) {
    const found = nonFiniteAt(member, `${path}.${key}`);
    if (found !== null) return found;
  }
  return null;
}

function notFound(what: string): never {
  throw AppError.notFound(what);
}
