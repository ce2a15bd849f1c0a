import { setImmediate } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { monotonicFactory } from 'ulid';
import { computeEventHash, computeEventHashV2, deriveSalts, newSaltSeed } from '@app/hashing';
import {
  ChainHeadsRepository,
  Db,
  EventRecord,
  EventWritesRepository,
  LockedChainHead,
  TransactionRunner,
} from '@app/database';
import { AppendRequest, StaleSchemas } from './append-request';
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

/** The ledger's steps for `requests`, in the transaction it was given: their events, committed with it. */
export type AppendInTransaction = (requests: readonly AppendRequest[]) => Promise<EventRecord[]>;

/**
 * How events are appended: one transaction writes a batch of events, of one chain or many.
 *
 * 1. create the chains that do not exist yet (ON CONFLICT DO NOTHING: a racing creator wins,
 *    we wait for its commit and use its row);
 * 2. lock every chain head the batch touches, in id order, so that concurrent transactions of
 *    this or another instance never deadlock and never fork a chain;
 * 3. under those locks, refuse the transaction (StaleSchemas) if an event was checked against
 *    another action schema generation of its account than the one read with the lock;
 * 4. under those locks, give each event the next position, the head's hash as previousHash, a
 *    timestamp that never goes back, and its SHA-256 hash;
 * 5. insert all events in one statement; meanwhile grow each chain's Merkle tree by their leaves
 *    (ChainTrees: one frontier query, queued behind the insert, unless remembered); then move every
 *    head forward, storing the new nodes in the same statement.
 * The unique (chain_id, position) constraint stays as the last line of defence. That is all the
 * ledger does: what else an append's transaction holds (its Idempotency-Keys) wraps it
 * (IdempotentLedger, through `transaction`).
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
    private readonly trees: ChainTrees,
  ) {}

  /**
   * Runs `work` in a transaction of its own, giving it `append` (the ledger's steps in that
   * transaction) and the transaction, for what a wrapper does around them in it. The
   * TransactionRunner runs `work` again, whole, after a serialization failure or a deadlock. The
   * chains appended to are remembered as committed once the transaction commits.
   */
  async transaction<T>(work: (append: AppendInTransaction, tx: Db) => Promise<T>): Promise<T> {
    let written: string[] = [];
    const result = await this.transactions.run((tx) => {
      written = [];
      return work(async (requests) => {
        const { events, chains } = await this.write(requests, tx);
        written.push(...chains);
        return events;
      }, tx);
    });
    if (this.committedChains.size > COMMITTED_CHAINS_MAX) this.committedChains.clear();
    for (const chain of written) this.committedChains.add(chain);
    return result;
  }

  /**
   * Appends `requests` in order inside a transaction the caller opened and commits: the service's
   * own `_audit` events, written with the change they describe (docs/contract.md §12). The same steps,
   * under the same chain locks; its chains are not remembered as committed, since the caller may
   * still roll back.
   */
  async append(requests: readonly AppendRequest[], tx: Db): Promise<EventRecord[]> {
    return (await this.write(requests, tx)).events;
  }

  /** The steps of one append, in `tx`: the events written, in request order, and their chains (chainKey). */
  private async write(
    requests: readonly AppendRequest[],
    tx: Db,
  ): Promise<{ events: EventRecord[]; chains: Iterable<string> }> {
    if (requests.length === 0) return { events: [], chains: [] };
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
    return { events, chains: heads.keys() };
  }

  private async lockHeads(requests: readonly AppendRequest[], tx: Db): Promise<Map<string, ChainHead>> {
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

/**
 * Under the chains' locks, a schema version saved after an event was checked shows as another
 * generation of its account: the transaction is refused (StaleSchemas, rolled back whole with
 * whatever wraps the ledger in it) and the event checked again, so every append that starts after
 * a version's 201 is checked against it, on every instance.
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
