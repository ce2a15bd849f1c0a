import { setImmediate } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { monotonicFactory } from 'ulid';
import { AppError } from '@app/common';
import { computeEventHash, computeEventHashV2, deriveSalts, newSaltSeed } from '@app/hashing';
import {
  accountKey,
  ChainHeadsRepository,
  Db,
  EventRecord,
  EventWritesRepository,
  IdempotencyKeysRepository,
  LockedChainHead,
  TransactionRunner,
} from '@app/database';
import { IdempotencyService } from '../idempotency.service';
import { Appended, AppendRequest, Idempotency, Replay, StaleSchemas } from './append-request';
import { ChainTrees } from './chain-trees';

interface ChainHead {
  id: string;
  name: string;
  hashVersion: 1 | 2;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: number;
  /** The chain's account's action schema generation, read with the lock (docs/contract.md §19). */
  schemaGeneration: number;
}

/** Chains remembered as already committed; beyond, the set starts again (memory stays bounded). */
const COMMITTED_CHAINS_MAX = 100_000;

const chainKey = (accountId: string, name: string): string => `${accountId}\u0000${name}`;

/**
 * How events are appended: one transaction writes a batch of events, of one chain or many.
 *
 * 1. create the chains that do not exist yet (ON CONFLICT DO NOTHING: a racing creator wins,
 *    we wait for its commit and use its row);
 * 2. lock every chain head the batch touches, in id order, so that concurrent transactions of
 *    this or another instance never deadlock and never fork a chain;
 * 3. under those locks, give each event the next position, the head's hash as previousHash, a
 *    timestamp that never goes back, and its SHA-256 hash;
 * 4. insert all events in one statement; meanwhile grow each chain's Merkle tree by their leaves
 *    (ChainTrees: one frontier query, queued behind the insert, unless remembered); then move every
 *    head forward, storing the new nodes in the same statement;
 * 5. store the responses of requests that carry an Idempotency-Key, in the same transaction.
 *    Before anything else, their keys are locked (IdempotencyKeysRepository.lockKeys, without
 *    waiting): a key another transaction holds is 409, a key already answered is replayed (or 422),
 *    so one key never appends twice; and a lock dies with its transaction, so a transaction cut
 *    by a failover leaves no claim behind (docs/contract.md §7, §21).
 * The unique (chain_id, position) constraint stays as the last line of defence. The
 * TransactionRunner runs it all again after a serialization failure or a deadlock.
 */
@Injectable()
export class ChainLedger {
  private readonly nextId = monotonicFactory();
  /** Chains whose row is known to be committed: their batches skip the create statement. */
  private readonly committedChains = new Set<string>();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly chains: ChainHeadsRepository,
    private readonly events: EventWritesRepository,
    private readonly idempotencyKeys: IdempotencyKeysRepository,
    private readonly trees: ChainTrees,
  ) {}

  /**
   * Appends `requests` in order; result i belongs to request i: its event, the replay of its
   * Idempotency-Key's stored answer, or the error that refused it alone (its key in flight or
   * reused). Throws if nothing was written.
   */
  async append(all: readonly AppendRequest[]): Promise<(Appended | Replay | AppError)[]> {
    const { results, heads } = await this.transactions.run((tx) => this.write(all, tx));
    if (this.committedChains.size > COMMITTED_CHAINS_MAX) this.committedChains.clear();
    for (const key of heads.keys()) this.committedChains.add(key);
    return results;
  }

  /**
   * Appends `requests` (without Idempotency-Keys) inside a transaction the caller opened and
   * commits: the service's own `_audit` events, written with the change they describe (docs/contract.md
   * §12). The same steps as `append`, under the same chain locks; its chains are not remembered as
   * committed, since the caller may still roll back.
   */
  async appendWithin(requests: readonly AppendRequest[], tx: Db): Promise<EventRecord[]> {
    if (requests.some((r) => r.idempotency)) throw new Error('appendWithin takes no Idempotency-Key');
    const { results } = await this.write(requests, tx);
    return results.map((r) => {
      if (r instanceof AppError) throw r;
      if (r instanceof Replay) throw new Error('appendWithin replays nothing: it takes no Idempotency-Key');
      return r.event;
    });
  }

  /** The steps of one append transaction, in `tx`. */
  private async write(
    all: readonly AppendRequest[],
    tx: Db,
  ): Promise<{ results: (Appended | Replay | AppError)[]; heads: Map<string, ChainHead> }> {
    const claims = claimsOf(all);
    const refused = await this.lockKeys(claims, tx);
    const requests = all.filter((r) => !r.idempotency || !refused.has(r.idempotency));
    const heads = await this.lockHeads(requests, tx);
    refuseStaleSchemas(requests, heads);
    const events = requests.map((request) => this.nextEvent(request, heads));
    // The trees grow (hashing, in this process) while PostgreSQL inserts the events: the insert
    // is on the wire once the microtasks that send it have run, so grow starts a turn later.
    const [, storeTrees] = await Promise.all([
      this.events.insertMany(events, tx),
      setImmediate().then(() => this.trees.grow(events, tx)),
    ]);
    await this.chains.moveHeads(
      [...heads.values()].map((h) => ({ ...h, lastTimestamp: new Date(h.lastTimestamp) })),
      tx,
      storeTrees,
    );
    const responses = respondAll(requests, events);
    const appended = requests.map((r, i): Appended => {
      const event = events[i]!;
      return r.idempotency ? { event, response: responses.get(r.idempotency) } : { event };
    });
    await this.idempotencyKeys.store(
      [...responses].map(([idempotency, response]) => ({
        accountId: claims.get(idempotency)!,
        key: idempotency.key,
        requestDigest: idempotency.digest,
        response,
      })),
      tx,
    );
    const written = appended.values();
    const results = all.map((r) => (r.idempotency && refused.get(r.idempotency)) || written.next().value!);
    return { results, heads };
  }

  /**
   * Locks the Idempotency-Keys of `claims` in `tx` and answers the requests that must not append,
   * with what they get instead: 409 for a key another transaction holds (or an earlier request
   * of this one: the lock is the session's, taken twice it is held twice), the replay of a key
   * already answered, 422 for a key answered for another body.
   */
  private async lockKeys(claims: Map<Idempotency, string>, tx: Db): Promise<Map<Idempotency, Replay | AppError>> {
    const first = new Map<string, Idempotency>();
    for (const [idempotency, accountId] of claims) {
      const id = accountKey(accountId, idempotency.key);
      if (!first.has(id)) first.set(id, idempotency);
    }
    const records = await this.idempotencyKeys.lockKeys(
      [...first.values()].map((idempotency) => ({ accountId: claims.get(idempotency)!, key: idempotency.key })),
      tx,
    );
    const refused = new Map<Idempotency, Replay | AppError>();
    for (const [idempotency, accountId] of claims) {
      const id = accountKey(accountId, idempotency.key);
      const record = records.get(id);
      const answer =
        first.get(id) !== idempotency || record === undefined
          ? IdempotencyService.inProgress()
          : IdempotencyService.answer(record, idempotency.digest);
      if (answer) refused.set(idempotency, answer);
    }
    return refused;
  }

  private async lockHeads(requests: readonly AppendRequest[], tx: Db): Promise<Map<string, ChainHead>> {
    if (requests.length === 0) return new Map();
    const wanted = new Map<string, { accountId: string; name: string }>();
    for (const r of requests)
      wanted.set(chainKey(r.accountId, r.chainName), { accountId: r.accountId, name: r.chainName });
    const chains = [...wanted.values()].sort((a, b) =>
      chainKey(a.accountId, a.name) < chainKey(b.accountId, b.name) ? -1 : 1,
    );
    const unknown = chains.filter((c) => !this.committedChains.has(chainKey(c.accountId, c.name)));
    if (unknown.length > 0) {
      await this.chains.createMissing(
        unknown.map((c) => ({ ...c, id: `chn_${this.nextId()}` })),
        tx,
      );
    }
    const locked = await this.chains.lockHeads(chains, tx);
    return new Map(locked.map((chain: LockedChainHead) => [chainKey(chain.accountId, chain.name), headOf(chain)]));
  }

  private nextEvent(request: AppendRequest, heads: Map<string, ChainHead>): EventRecord {
    const head = heads.get(chainKey(request.accountId, request.chainName));
    if (!head) throw new Error(`chain head of '${request.chainName}' was not locked`);
    // Taken under the chain's lock and never behind the previous event, even if the clock steps back.
    const time = Math.max(Date.now(), head.lastTimestamp);
    const event: EventRecord = {
      id: `evt_${this.nextId()}`,
      accountId: request.accountId,
      chainId: head.id,
      chainName: head.name,
      position: head.lastPosition + 1,
      actor: request.actor,
      action: request.action,
      resource: request.resource,
      context: request.context,
      timestamp: new Date(time),
      previousHash: head.lastHash,
      hash: '',
      saltSeed: head.hashVersion === 2 ? newSaltSeed() : null,
      erasure: null,
      schema: request.schema?.ref ?? null,
    };
    const payload = { ...event, timestamp: event.timestamp.toISOString() };
    event.hash =
      event.saltSeed === null
        ? computeEventHash(payload)
        : computeEventHashV2(payload, { version: 2, salts: deriveSalts(event.saltSeed, event), commitments: {} });
    Object.assign(head, { lastPosition: event.position, lastHash: event.hash, lastTimestamp: time });
    return event;
  }
}

/** Each Idempotency-Key claim of `requests` once (the events of a batch share one), with its account. */
function claimsOf(requests: readonly AppendRequest[]): Map<Idempotency, string> {
  const claims = new Map<Idempotency, string>();
  for (const r of requests) if (r.idempotency) claims.set(r.idempotency, r.accountId);
  return claims;
}

/** The response of each claim, built once from its events in request order. */
function respondAll(requests: readonly AppendRequest[], events: readonly EventRecord[]): Map<Idempotency, string> {
  const eventsOf = new Map<Idempotency, EventRecord[]>();
  requests.forEach((r, i) => {
    if (!r.idempotency) return;
    const own = eventsOf.get(r.idempotency);
    if (own) own.push(events[i]!);
    else eventsOf.set(r.idempotency, [events[i]!]);
  });
  return new Map([...eventsOf].map(([idempotency, own]) => [idempotency, idempotency.respond(own)]));
}

/**
 * Under the chains' locks, a schema version saved after an event was checked shows as another
 * generation of its account: the transaction is refused (StaleSchemas) and the event checked again,
 * so every append that starts after a version's 201 is checked against it, on every instance.
 */
function refuseStaleSchemas(requests: readonly AppendRequest[], heads: Map<string, ChainHead>): void {
  let stale: Set<string> | null = null;
  for (const r of requests) {
    if (r.schema === undefined) continue;
    if (heads.get(chainKey(r.accountId, r.chainName))?.schemaGeneration !== r.schema.generation)
      (stale ??= new Set()).add(r.accountId);
  }
  if (stale) throw new StaleSchemas(stale);
}

function headOf(chain: LockedChainHead): ChainHead {
  return {
    id: chain.id,
    name: chain.name,
    hashVersion: chain.hashVersion,
    lastPosition: chain.lastPosition,
    lastHash: chain.lastHash,
    lastTimestamp: chain.lastTimestamp?.getTime() ?? 0,
    schemaGeneration: chain.schemaGeneration,
  };
}
