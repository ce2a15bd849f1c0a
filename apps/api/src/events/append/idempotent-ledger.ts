import { Injectable } from '@nestjs/common';
import { AppError } from '@app/common';
import {
  accountKey,
  Db,
  ERASED_REQUEST_DIGEST,
  EventRecord,
  IdempotencyKeyRecord,
  IdempotencyKeysRepository,
} from '@app/database';
import { AppendRequest } from './append-request';
import { ChainLedger } from './chain-ledger';

/** One request's events (a single event or a batch): written together in one transaction, or not at all. */
export interface AppendUnit {
  events: AppendRequest[];
  /** With an Idempotency-Key: locked and answered in the transaction that writes the events. */
  idempotency: Idempotency | null;
}

export interface Idempotency {
  accountId: string;
  key: string;
  /** IdempotencyService.digest of the request: stored with the response, compared by later requests. */
  digest: string;
  /** The response body as JSON text, from the request's events in order: stored as is, sent as is. */
  respond: (events: EventRecord[]) => string;
}

/** A request's events as committed, and for a keyed request the answer stored under its key (JSON text). */
export interface Written {
  events: EventRecord[];
  answer: string | null;
}

/** A keyed request whose key was already answered (docs/contract.md §7): that answer, replayed as is; nothing appended. */
export class Replay {
  constructor(readonly json: string) {}
}

/** What one request gets from the transaction it went in: its events, a replay, or the error that refused it alone. */
export type Settled = Written | Replay | AppError;

/**
 * The ledger with Idempotency-Keys (docs/contract.md §7, §21), wrapped around it as a decorator is
 * around an appender: its two steps run in the ledger's own transaction, around the ledger's append.
 *
 * 1. Before anything is written, the keys of the requests are locked (a transaction-scoped advisory
 *    lock, taken without waiting: IdempotencyKeysRepository.lockKeys). A key another transaction
 *    holds is 409 for that request alone, a key already answered is replayed (or 422): so one key
 *    never appends twice, and a lock dies with its transaction, so a transaction cut by a failover
 *    leaves no claim behind.
 * 2. The ledger appends the events of the other requests.
 * 3. Each keyed request's answer is built from its events and stored under its key, in the same
 *    transaction: committed with the events, or not at all.
 * Requests without a key pass straight through to the ledger.
 */
@Injectable()
export class IdempotentLedger {
  constructor(
    private readonly ledger: ChainLedger,
    private readonly keys: IdempotencyKeysRepository,
  ) {}

  /** Writes `units` in one transaction; result i is unit i's. Throws (for all of them) if nothing was written. */
  append(units: readonly AppendUnit[]): Promise<Settled[]> {
    return this.ledger.transaction(async (append, tx) => {
      const refused = await this.lockKeys(units, tx);
      const admitted = refused.size === 0 ? units : units.filter((unit) => !refused.has(unit));
      const events = await append(admitted.length === 1 ? admitted[0]!.events : admitted.flatMap((u) => u.events));
      const written = new Map<AppendUnit, Written>();
      let at = 0;
      for (const unit of admitted) {
        const own = admitted.length === 1 ? events : events.slice(at, (at += unit.events.length));
        written.set(unit, { events: own, answer: unit.idempotency?.respond(own) ?? null });
      }
      await this.keys.store(answersOf(written), tx);
      return units.map((unit) => refused.get(unit) ?? written.get(unit)!);
    });
  }

  /**
   * Locks the Idempotency-Keys of `units` in `tx` and answers the requests that must not append,
   * with what they get instead: 409 for a key another transaction holds (or an earlier request of
   * this one: the lock is the session's, taken twice it is held twice), the replay of a key already
   * answered, 422 for a key answered for another body.
   */
  private async lockKeys(units: readonly AppendUnit[], tx: Db): Promise<Map<AppendUnit, Replay | AppError>> {
    const refused = new Map<AppendUnit, Replay | AppError>();
    const keyed: [AppendUnit, Idempotency][] = [];
    for (const unit of units) if (unit.idempotency) keyed.push([unit, unit.idempotency]);
    if (keyed.length === 0) return refused;
    const first = new Map<string, Idempotency>();
    for (const [, idempotency] of keyed) {
      const id = accountKey(idempotency.accountId, idempotency.key);
      if (!first.has(id)) first.set(id, idempotency);
    }
    const records = await this.keys.lockKeys([...first.values()], tx);
    for (const [unit, idempotency] of keyed) {
      const id = accountKey(idempotency.accountId, idempotency.key);
      const record = records.get(id);
      const answer =
        first.get(id) !== idempotency || record === undefined ? inProgress() : answerOf(record, idempotency.digest);
      if (answer) refused.set(unit, answer);
    }
    return refused;
  }
}

/** The answers to store: one per keyed request written. */
function answersOf(written: Map<AppendUnit, Written>) {
  const answers: { accountId: string; key: string; requestDigest: string; response: string }[] = [];
  for (const [{ idempotency }, { answer }] of written)
    if (idempotency && answer !== null)
      answers.push({
        accountId: idempotency.accountId,
        key: idempotency.key,
        requestDigest: idempotency.digest,
        response: answer,
      });
  return answers;
}

/**
 * What a request with `digest` gets from a key's stored record: its replay, a 422 for another
 * body, or null when the key is free (no record, or a claim an earlier version left unanswered).
 */
export function answerOf(record: IdempotencyKeyRecord | null, digest: string): Replay | AppError | null {
  if (record === null || record.response === null) return null;
  // An erasure rewrote this answer and forgot the request's digest (docs/contract.md §17): any body replays it.
  if (record.requestDigest !== digest && record.requestDigest !== ERASED_REQUEST_DIGEST) return reused();
  return new Replay(record.response);
}

/** 409: a request with this key is still being processed, here or on another instance. */
export function inProgress(): AppError {
  return new AppError(
    'IDEMPOTENCY_IN_PROGRESS',
    'A request with this Idempotency-Key is still being processed.',
    {},
    { 'Retry-After': '1' },
  );
}

/** 422: the key was used with another request body (or on the other append endpoint). */
export function reused(): AppError {
  return new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body.');
}
