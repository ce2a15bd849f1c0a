import { Injectable } from '@nestjs/common';
import { monotonicFactory } from 'ulid';
import { AuditTrail, AuthenticatedKey, keyActor, mayManage, seesEveryAccount } from '@app/auth';
import { AppConfig, AppError, ERASURES_CURSOR, parseSearchQuery } from '@app/common';
import {
  AccountsRepository,
  Db,
  ErasureMatch,
  ErasuresRepository,
  EventErasure,
  IdempotencyKeysRepository,
  TransactionRunner,
} from '@app/database';
import { erase, erasedFields, HashingV2, hashingOf, NEVER_ERASABLE, parseFieldPath } from '@app/hashing';
import { EraseDto } from './dto/erase.dto';
import { ErasureResultView, ErasureView, ListErasuresQuery } from './dto/erasure.view';

/**
 * Erasure (docs/contract.md §17): the personal fields of the matching version-2 events are nulled
 * through the database's erasure function, their values and salts deleted, their commitments kept,
 * so every hash, link, tree node, proof and checkpoint stays. One transaction: the events, the
 * idempotency records that answered their appends (their stored answers rewritten, their request
 * digests no longer kept), the erasure's record and its `_audit` entry `erasure.done` (without the
 * query or any value). Who (@RequireScopes(MANAGE)): an admin for its own account, an operator naming
 * `accountId`; an account the caller may not manage is a 404.
 */
@Injectable()
export class ErasureService {
  private readonly nextId = monotonicFactory();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly erasures: ErasuresRepository,
    private readonly accounts: AccountsRepository,
    private readonly idempotency: IdempotencyKeysRepository,
    private readonly trail: AuditTrail,
    private readonly config: AppConfig,
  ) {}

  async erase(caller: AuthenticatedKey, dto: EraseDto): Promise<{ data: ErasureResultView }> {
    checkFields(dto.fields);
    const search = parseSearchQuery(dto.q).terms;
    if (search.length === 0)
      throw AppError.validation([
        { field: 'q', message: 'q must have at least one term: an erasure never matches everything' },
      ]);
    const accountId = await this.accountOf(caller, dto.accountId);
    const id = `era_${this.nextId()}`;
    const record = await this.transactions.run(async (tx) => {
      // A hold placed while this runs is either committed before the matches are read (and refuses them) or waits.
      await this.erasures.lockLegalHolds(accountId, tx);
      const matches = await this.erasures.matches(accountId, { search }, this.config.erasureMaxEvents + 1, tx);
      if (matches.length > this.config.erasureMaxEvents)
        throw new AppError(
          'NOT_ERASABLE',
          `More than ${this.config.erasureMaxEvents} events match (ERASURE_MAX_EVENTS); narrow q.`,
          { limit: this.config.erasureMaxEvents },
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
      const rows = erasable.map((m) => erasureOf(m, dto.fields)).filter((row) => row !== null);
      const changed = rows.length === 0 ? 0 : await this.erasures.erase(accountId, rows, tx);
      if (changed !== rows.length) throw new Error(`the erasure changed ${changed} events, not ${rows.length}`);
      await this.rewriteAnswers(accountId, rows, tx);
      const saved = await this.erasures.record(
        {
          id,
          accountId,
          keyId: caller.keyId,
          events: rows.length,
          skipped: versionOne.length,
          fields: dto.fields,
          reason: dto.reason,
        },
        tx,
      );
      await this.trail.record(
        accountId,
        [
          {
            actor: keyActor(caller.keyId),
            action: 'erasure.done',
            resource: id,
            context: { events: rows.length, fields: dto.fields, reason: dto.reason },
          },
        ],
        tx,
      );
      return saved;
    });
    const { at, events, fields, skipped } = record;
    return { data: { id, at: at.toISOString(), events, fields, skipped } };
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

  /** The account erased: the caller's own for an admin (another one is a 404), the named one for an operator (required). */
  private async accountOf(caller: AuthenticatedKey, named: string | undefined): Promise<string> {
    if (named === undefined) {
      if (seesEveryAccount(caller))
        throw AppError.validation([{ field: 'accountId', message: 'accountId is required of an operator key' }]);
      return caller.accountId;
    }
    if (!mayManage(caller, named) || !(await this.accounts.findById(named)))
      throw AppError.notFound(`Account ${named}`);
    return named;
  }
}

/** A field path outside the erasable ones: 422 for the never-erasable members, 400 for anything else. */
function checkFields(fields: readonly string[]): void {
  const never = fields.filter((f) => NEVER_ERASABLE.includes(f) || f === 'chain' || f === 'hash');
  if (never.length > 0)
    throw new AppError(
      'NOT_ERASABLE',
      `${never.join(', ')} can never be erased: the hash and the chain rest on them.`,
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

/** The row audit_erase_events takes for one event, or null when none of `fields` holds a value in it. */
function erasureOf(match: ErasureMatch & { hashing: HashingV2 }, fields: readonly string[]): EventErasure | null {
  const event = { ...match, timestamp: match.timestamp.toISOString() };
  const result = erase(event, match.hashing, fields);
  if (result.erased.length === 0) return null;
  return {
    id: match.id,
    actor: result.event.actor === null && match.actor !== null,
    resource: result.event.resource === null && match.resource !== null,
    context: result.event.context,
    erasure: { salts: result.hashing.salts, commitments: result.hashing.commitments },
  };
}
