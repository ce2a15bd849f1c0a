import { Injectable } from '@nestjs/common';
import { AppError, FieldError, Metrics } from '@app/common';
import { ActionSchemaRow, ActionSchemasRepository } from '@app/database';
import { SchemaCheck } from '../events/append/append-request';
import { ActionPatterns } from './action-pattern';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { CHECK_SLICE_MS, compileSchema, EventCheck, REQUEST_CHECK_BUDGET_MS } from './schema-compiler';

/** Accounts whose schemas this instance keeps; beyond, the least recently used is forgotten. */
const ACCOUNTS_CACHED = 10_000;
/** Compiled schema versions kept; beyond, the least recently used is compiled again when needed. */
const VALIDATORS_CACHED = 2_000;

/** An account's current schemas as one snapshot read them: the latest non-deleted version of each pattern. */
interface AccountSchemas {
  generation: number;
  patterns: ActionPatterns<ActionSchemaRow>;
}

/** What a schema checks of an event: its `actor`, `resource` and `context`, null when absent (as stored). */
export interface CheckedEvent {
  actor: string | null;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
}

/** The 400 of a request whose checks took more than REQUEST_CHECK_BUDGET_MS, naming the first event left unchecked. */
function overBudget(field: string, row: Pick<ActionSchemaRow, 'action' | 'version'>): AppError {
  return new AppError('VALIDATION_ERROR', 'The event does not satisfy its action’s schema.', {
    fields: [
      {
        field,
        rule: 'budget',
        message: `checking the request's events against their schemas took more than ${REQUEST_CHECK_BUDGET_MS} ms; this event and the ones after it were not checked (budget): send fewer events per request or simplify the schema`,
      },
    ],
    schema: { action: row.action, version: row.version },
  });
}

/** A VALIDATION_ERROR field of a schema violation: the path, the failed keyword, what. */
type SchemaFieldError = FieldError & { rule: string };

/**
 * Checks appended events against their account's action schemas (docs/contract.md §19) before they
 * are queued. Each account's current schemas are kept here (read once, then trusted until the
 * append's transaction finds another generation: ChainLedger refuses it with StaleSchemas, and
 * EventsService calls `forget` and checks again); each version's validator is compiled once. An
 * event under an `enforce` schema that it does not satisfy is a 400 naming its path, the rule and
 * the version; under `warn` it is stored with `valid: false` and counted once committed.
 */
@Injectable()
export class SchemaGate {
  private readonly accounts = new Map<string, AccountSchemas>();
  private readonly loading = new Map<string, Promise<AccountSchemas>>();
  private readonly validators = new Map<number, EventCheck>();

  constructor(
    private readonly schemas: ActionSchemasRepository,
    private readonly metrics: Metrics,
  ) {}

  /**
   * The check of each event of one account (in order), or a 400 VALIDATION_ERROR listing every
   * event an enforced schema refuses, `fieldOf(i, path)` naming its field (`events[3].context.amount`
   * in a batch), with `details.schema` the first one's version. A refusal is only answered once the
   * account's generation is confirmed in the database (a version saved or deleted through another
   * instance since this one read them may allow the event): else the schemas are read again and
   * the events checked again. An acceptance needs no such read: the append's transaction checks
   * the generation under the chains' locks.
   */
  async check(
    accountId: string,
    events: readonly CheckedEvent[],
    fieldOf: (index: number, path: string) => string,
  ): Promise<SchemaCheck[]> {
    for (;;) {
      const schemas = await this.current(accountId);
      try {
        return await this.checkWith(schemas, events, fieldOf);
      } catch (error) {
        if (!(error instanceof AppError) || (await this.schemas.generation(accountId)) === schemas.generation)
          throw error;
        this.forget(accountId);
      }
    }
  }

  /**
   * The checks of one request take at most REQUEST_CHECK_BUDGET_MS together (compiling included),
   * giving the event loop back every CHECK_SLICE_MS: beyond, the request is refused naming the
   * first event left unchecked (rule `budget`), whatever the schema's mode.
   */
  private async checkWith(
    { generation, patterns }: AccountSchemas,
    events: readonly CheckedEvent[],
    fieldOf: (index: number, path: string) => string,
  ): Promise<SchemaCheck[]> {
    if (patterns.size === 0) return events.map(() => ({ generation, ref: null }));
    const refused: SchemaFieldError[] = [];
    let refusedBy: { action: string; version: number } | null = null;
    const checks: SchemaCheck[] = [];
    let spent = 0;
    let slice = performance.now();
    for (const [i, event] of events.entries()) {
      const match = patterns.match(event.action);
      if (!match) {
        checks.push({ generation, ref: null });
        continue;
      }
      const row = match.value;
      const now = performance.now();
      if (spent + (now - slice) > REQUEST_CHECK_BUDGET_MS) throw overBudget(fieldOf(i, ''), row);
      if (now - slice >= CHECK_SLICE_MS) {
        spent += now - slice;
        await yieldToEventLoop();
        slice = performance.now();
      }
      const violation = this.validatorOf(row)({ actor: event.actor, resource: event.resource, context: event.context });
      if (violation && row.mode === 'enforce') {
        refused.push({ field: fieldOf(i, violation.path), message: violation.message, rule: violation.rule });
        refusedBy ??= { action: row.action, version: row.version };
      }
      checks.push({
        generation,
        ref: { id: row.id, action: row.action, version: row.version, valid: violation === null },
      });
    }
    if (refusedBy)
      throw new AppError('VALIDATION_ERROR', 'The event does not satisfy its action’s schema.', {
        fields: refused,
        schema: refusedBy,
      });
    return checks;
  }

  /** Counts the events stored under a warn schema they did not satisfy (audit_schema_violations_total). */
  stored(checks: readonly SchemaCheck[]): void {
    for (const { ref } of checks) if (ref && !ref.valid) this.metrics.schemaViolated(ref.action);
  }

  /** Drops what this instance knows of the account's schemas: the next check reads them again. */
  forget(accountId: string): void {
    this.accounts.delete(accountId);
    this.loading.delete(accountId);
  }

  /** The validator of a stored version, compiled once (it was checked when it was saved). */
  validatorOf(row: Pick<ActionSchemaRow, 'id' | 'schema'>): EventCheck {
    let validator = this.validators.get(row.id);
    if (validator) {
      this.validators.delete(row.id);
    } else {
      if (row.schema === null) throw new Error(`schema version ${row.id} is a deletion: it checks nothing`);
      validator = compileSchema(row.schema);
      if (this.validators.size >= VALIDATORS_CACHED) this.validators.delete(this.validators.keys().next().value!);
    }
    this.validators.set(row.id, validator);
    return validator;
  }

  private async current(accountId: string): Promise<AccountSchemas> {
    const known = this.accounts.get(accountId);
    if (known) {
      // Most recently used last: the first key is the one to forget.
      this.accounts.delete(accountId);
      this.accounts.set(accountId, known);
      return known;
    }
    let load = this.loading.get(accountId);
    if (!load) {
      load = this.load(accountId);
      this.loading.set(accountId, load);
    }
    try {
      return await load;
    } finally {
      if (this.loading.get(accountId) === load) this.loading.delete(accountId);
    }
  }

  private async load(accountId: string): Promise<AccountSchemas> {
    const { generation, versions } = await this.schemas.latest(accountId);
    const schemas: AccountSchemas = {
      generation,
      patterns: new ActionPatterns(versions.filter((v) => v.schema !== null).map((v) => [v.action, v] as const)),
    };
    if (this.loading.has(accountId)) {
      if (this.accounts.size >= ACCOUNTS_CACHED) this.accounts.delete(this.accounts.keys().next().value!);
      this.accounts.set(accountId, schemas);
    }
    return schemas;
  }
}
