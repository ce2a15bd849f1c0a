import { Injectable } from '@nestjs/common';
import { monotonicFactory } from 'ulid';
import { assertMayManage, AuthenticatedKey, lockActiveCaller, manageableAccount, seesEveryAccount } from '@app/auth';
import { AppConfig, AppError, ERASURES_CURSOR, parseSearchQuery, SearchTerm } from '@app/common';
import {
  AccountsRepository,
  ApiKeysRepository,
  AUDIT_CHAIN,
  AuditTrail,
  Db,
  ErasureMatch,
  ErasureRecord,
  ErasuresRepository,
  EventErasure,
  IdempotencyKeysRepository,
  keyActor,
  TransactionRunner,
} from '@app/database';
import { erase, erasedFields, HashingV2, hashingOf, NEVER_ERASABLE, parseFieldPath } from '@app/hashing';
import { EraseDto } from './dto/erase.dto';
import { ErasureDryRunView, ErasureResultView, ErasureView, ListErasuresQuery } from './dto/erasure.view';
import { ErasureNotices } from './erasure-notices';
import { ErasureScrubber } from './erasure-scrubber';
import { ErasedValue, erasedValuesOf, holdsErasedText, quotingMembers } from './quoted-values';

const CONTEXT_PREFIX = 'context.';

type ErasureAnswer = { data: ErasureResultView } | { data: ErasureDryRunView };

/**
 * Erasure (docs/contract.md §17): the personal fields of the matching version-2 events are nulled
 * through the database's erasure function, their values and salts deleted, their commitments kept,
 * so every hash, link, tree node, proof and checkpoint stays. One transaction, which re-checks the
 * calling key first (an irreversible action: a key revoked a moment ago elsewhere erases nothing):
 * the events, the idempotency records that answered their appends (their stored answers rewritten,
 * their request digests no longer kept), the members of the account's `_audit` entries that quote
 * an erased value (a second erasure, of its own record), and an `_audit` entry `erasure.done` for
 * each (without the query or any value). The database writes the records of both itself.
 * Who (@RequireScopes(MANAGE)): an admin for its own account, `_audit` excepted; an operator naming
 * `accountId`, `_audit` included (recorded in `system`'s `_audit` too); an account the caller may
 * not manage is a 404.
 */
@Injectable()
export class ErasureService {
  private readonly nextId = monotonicFactory();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly erasures: ErasuresRepository,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly idempotency: IdempotencyKeysRepository,
    private readonly trail: AuditTrail,
    private readonly config: AppConfig,
    private readonly scrubber: ErasureScrubber,
    private readonly notices: ErasureNotices,
  ) {}

  async erase(
    caller: AuthenticatedKey,
    dto: EraseDto,
  ): Promise<{ data: ErasureResultView } | { data: ErasureDryRunView }> {
    checkFields(dto.fields);
    const search = parseSearchQuery(dto.q).terms;
    if (!search.some(namesValue))
      throw AppError.validation([
        {
          field: 'q',
          message:
            'q must have at least one term that is not negated and names a value (actor:, action:, resource:, chain:, chain_id: or context.<path>:): an erasure never matches everything',
        },
      ]);
    const accountId = await this.accountOf(caller, dto.accountId);
    const answer = await this.transactions.run<ErasureAnswer>(async (tx) => {
      const by = await lockActiveCaller(this.apiKeys, caller, tx);
      assertMayManage(by, accountId);
      // A hold placed while this runs is either committed before the matches are read (and refuses them) or waits.
      await this.erasures.lockLegalHolds(accountId, tx);
      const matches = await this.erasures.matches(accountId, { search }, this.config.erasureMaxEvents + 1, tx);
      if (matches.length === 0)
        throw new AppError('NOTHING_MATCHED', 'No event matches q: nothing was erased or recorded.', {});
      if (matches.length > this.config.erasureMaxEvents)
        throw new AppError(
          'NOT_ERASABLE',
          `More than ${this.config.erasureMaxEvents} events match (ERASURE_MAX_EVENTS); narrow q.`,
          { limit: this.config.erasureMaxEvents },
        );
      const reserved = matches.filter((m) => m.chainName === AUDIT_CHAIN);
      if (reserved.length > 0 && !seesEveryAccount(by))
        throw new AppError(
          'NOT_ERASABLE',
          `Matching events are on the account's ${AUDIT_CHAIN} chain, which only an operator may erase fields of; narrow q (for example with -chain:${AUDIT_CHAIN}).`,
          { chains: [...new Set(reserved.map((m) => m.chainId))].sort(), reserved: AUDIT_CHAIN },
        );
      // Each match with its hashing (derived from its seed once): none on version-1 chains.
      const hashed = matches.map((match) => ({ match, hashing: hashingOf(match) }));
      const versionOne = hashed.filter((m) => m.hashing === null).map((m) => m.match);
      if (versionOne.length > 0 && dto.allowPartial !== true)
        throw new AppError(
          'NOT_ERASABLE',
          'Some matching events are on version-1 chains, whose hashes cover the values themselves: they cannot be erased. Send allowPartial: true to erase the others.',
          { chains: [...new Set(versionOne.map((m) => m.chainId))].sort() },
        );
      const erasable = hashed.flatMap(({ match, hashing }) => (hashing === null ? [] : [{ ...match, hashing }]));
      const account = await this.accounts.findById(accountId, tx);
      const held = erasable.filter((m) => m.chainHeld);
      if (account?.legalHold || held.length > 0)
        throw new AppError(
          'CONFLICT',
          'Matching events are under legal hold: they cannot be erased until it is lifted.',
          {
            chains: account?.legalHold ? [] : [...new Set(held.map((m) => m.chainId))].sort(),
            accountHold: account?.legalHold ?? false,
          },
        );
      const erased = erasable.map((m) => erasureOf(m, dto.fields)).filter((e) => e !== null);
      const rows = erased.map((e) => e.row);
      if (rows.length === 0)
        throw new AppError(
          'NOTHING_MATCHED',
          `${matches.length} event(s) match q, but none holds a value in the fields named (erased already, absent, or on version-1 chains): nothing was erased or recorded.`,
          { matched: matches.length, skipped: versionOne.length },
        );
      const values = erased.flatMap((e) => e.values);
      // The reason is kept for good (the erasures table is append-only): it must not say what is erased.
      if (holdsErasedText(dto.reason, values))
        throw AppError.validation([{ field: 'reason', message: 'reason must not contain a value the erasure erases' }]);
      // What the caller confirmed binds: the erasure changes exactly that many events, or none.
      if (dto.expectEvents !== undefined && dto.expectEvents !== rows.length)
        throw new AppError(
          'CONFLICT',
          `The erasure would change ${rows.length} event(s), not the ${dto.expectEvents} expected: count again (a dry run) and confirm that number.`,
          { expectEvents: dto.expectEvents, events: rows.length },
        );
      if (dto.dryRun === true) return { data: { events: rows.length, skipped: versionOne.length, dryRun: true } };

      const request = { keyId: by.keyId, fields: dto.fields, reason: dto.reason, skipped: versionOne.length };
      const record = await this.erasures.erase(accountId, rows, { id: this.newId(), ...request }, tx);
      if (record.events !== rows.length)
        throw new Error(`the erasure changed ${record.events} events, not ${rows.length}`);
      await this.rewriteAnswers(accountId, rows, tx);
      const quotes = await this.eraseQuotes(
        accountId,
        by,
        record.id,
        erased.flatMap((e) => e.values),
        tx,
      );
      for (const done of quotes ? [record, quotes] : [record]) await this.recordDone(by, accountId, done, tx);
      const { id, at, events, fields, skipped } = record;
      return { data: { id, at: at.toISOString(), events, fields, skipped } };
    });
    if (!('dryRun' in answer.data)) {
      // Committed: copies of the events kept on this instance (streams' shared page reads) go before the answer.
      this.notices.erased(accountId);
      // What the erasure left in the database's files (a dry run changed nothing).
      this.scrubber.afterErasure();
    }
    return answer;
  }

  async list(
    caller: AuthenticatedKey,
    query: ListErasuresQuery,
  ): Promise<{ data: ErasureView[]; nextCursor?: string }> {
    const accountId = await this.accountOf(caller, query.accountId);
    const cursor = query.cursor ? ERASURES_CURSOR.decode(accountId, query.cursor) : undefined;
    const rows = await this.erasures.list(accountId, query.limit + 1, cursor);
    const page = ERASURES_CURSOR.page(accountId, rows, query.limit, (r) => ({ time: r.at.toISOString(), id: r.id }));
    const data = page.items.map(({ id, at, keyId, events, fields, reason }) => ({
      id,
      at: at.toISOString(),
      keyId,
      events,
      fields,
      reason,
    }));
    return { data, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /**
   * The answers idempotency records keep of the erased events' appends (a replay answers the event as it
   * now is): each event in them as toEventView now writes it, and the request's digest forgotten.
   */
  private async rewriteAnswers(accountId: string, rows: readonly EventErasure[], tx: Db): Promise<void> {
    const byId = new Map(rows.map((row) => [row.id, row]));
    const answers = await this.idempotency.answersHolding(accountId, [...byId.keys()], tx);
    const rewritten = answers.map(({ key, response }) => ({
      key,
      response: JSON.stringify(JSON.parse(response ?? 'null'), (_name, value: unknown) => erasedView(value, byId)),
    }));
    await this.idempotency.replaceErasedAnswers(accountId, rewritten, tx);
  }

  /**
   * The members of the account's `_audit` entries that quote one of the `values` just erased (an
   * export's `filters`, a `q`: quoted-values.ts), erased as an erasure of its own (its reason names
   * the first), in the same transaction; null when none does. Entries on a version-1 `_audit` chain or
   * one under legal hold are left as they are.
   */
  private async eraseQuotes(
    accountId: string,
    by: AuthenticatedKey,
    erasureId: string,
    values: readonly ErasedValue[],
    tx: Db,
  ): Promise<ErasureRecord | null> {
    const candidates = await this.erasures.auditEntriesWith(accountId, ['filters', 'q'], tx);
    const rows = candidates.flatMap((match) => {
      const hashing = hashingOf(match);
      const members = match.context === null ? [] : quotingMembers(match.context, values);
      if (hashing === null || match.chainHeld || members.length === 0) return [];
      const erased = erasureOf(
        { ...match, hashing },
        members.map((m) => `${CONTEXT_PREFIX}${m}`),
      );
      return erased === null ? [] : [erased.row];
    });
    if (rows.length === 0) return null;
    const fields = [...new Set(rows.flatMap((row) => Object.keys(row.erasure.commitments.context ?? {})))]
      .sort()
      .map((m) => `${CONTEXT_PREFIX}${m}`);
    const reason = `${AUDIT_CHAIN} entries quoting values erased by ${erasureId}`;
    return this.erasures.erase(accountId, rows, { id: this.newId(), keyId: by.keyId, fields, reason, skipped: 0 }, tx);
  }

  /** `erasure.done` in the account's `_audit`, and in the operator's own (`system`) when it erased another account. */
  private async recordDone(by: AuthenticatedKey, accountId: string, done: ErasureRecord, tx: Db): Promise<void> {
    const context = { events: done.events, fields: done.fields, reason: done.reason };
    const entry = { actor: keyActor(by.keyId), action: 'erasure.done', resource: done.id } as const;
    await this.trail.record(accountId, [{ ...entry, context }], tx);
    if (by.accountId !== accountId)
      await this.trail.record(by.accountId, [{ ...entry, context: { accountId, ...context } }], tx);
  }

  private newId(): string {
    return `era_${this.nextId()}`;
  }

  /** The account erased: the caller's own for an admin (another one is a 404), the named one for an operator (required). */
  private async accountOf(caller: AuthenticatedKey, named: string | undefined): Promise<string> {
    if (named === undefined) {
      if (seesEveryAccount(caller))
        throw AppError.validation([{ field: 'accountId', message: 'accountId is required of an operator key' }]);
      return caller.accountId;
    }
    await manageableAccount(caller, named, (id) => this.accounts.findById(id));
    return named;
  }
}

/** A field path outside the erasable ones: 422 for the never-erasable members, 400 for anything else. */
function checkFields(fields: readonly string[]): void {
  const never = fields.filter((f) => NEVER_ERASABLE.includes(f) || f === 'chain' || f === 'hash');
  if (never.length > 0)
    throw new AppError(
      'NOT_ERASABLE',
      `${never.join(', ')} ${never.length === 1 ? 'is' : 'are'} never erasable: the hash and the chain rest on ${never.length === 1 ? 'it' : 'them'}.`,
      {
        paths: never,
      },
    );
  const unknown = fields.filter((f) => parseFieldPath(f) === null);
  if (unknown.length > 0)
    throw AppError.validation([
      {
        field: 'fields',
        message: `fields must be actor, resource, context.<member> or context.*; not ${unknown.join(', ')}`,
      },
    ]);
}

/** An event of a stored answer as it reads after its erasure (`row`); any other value as it is. */
function erasedView(value: unknown, byId: ReadonlyMap<string, EventErasure>): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('hash' in value) || !('id' in value))
    return value;
  const row = typeof value.id === 'string' ? byId.get(value.id) : undefined;
  if (row === undefined) return value;
  const hashing = { version: 2, salts: row.erasure.salts, commitments: row.erasure.commitments } as const;
  return {
    ...value,
    ...(row.actor ? { actor: null } : {}),
    ...(row.resource ? { resource: null } : {}),
    context: row.context,
    hashing,
    erased: erasedFields(hashing),
  };
}

/** A term that selects by a value: not negated, not a time bound, not a schema outcome. */
function namesValue(term: SearchTerm): boolean {
  return !term.negated && term.kind !== 'time' && term.kind !== 'schema';
}

/**
 * The row audit_erase_events takes for one event, with each value it erases (to find their quotes
 * in `_audit`), or null when none of `fields` holds a value in it.
 */
function erasureOf(
  match: ErasureMatch & { hashing: HashingV2 },
  fields: readonly string[],
): { row: EventErasure; values: ErasedValue[] } | null {
  const event = { ...match, timestamp: match.timestamp.toISOString() };
  const result = erase(event, match.hashing, fields);
  if (result.erased.length === 0) return null;
  const values = result.erased.flatMap((path) => {
    if (!path.startsWith(CONTEXT_PREFIX))
      return erasedValuesOf(path as 'actor' | 'resource', [], match[path as 'actor']);
    const member = path.slice(CONTEXT_PREFIX.length);
    return erasedValuesOf('context', [member], match.context?.[member]);
  });
  return {
    row: {
      id: match.id,
      actor: result.event.actor === null && match.actor !== null,
      resource: result.event.resource === null && match.resource !== null,
      context: result.event.context,
      erasure: { salts: result.hashing.salts, commitments: result.hashing.commitments },
    },
    values,
  };
}
