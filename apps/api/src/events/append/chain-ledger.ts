import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { monotonicFactory } from 'ulid';
import { computeEventHash } from '@app/hashing';
import { EventEntity } from '@app/database';
import { toEventView } from '../event.mapper';
import { AppendRequest } from './append-request';

interface ChainHead {
  id: string;
  accountId: string;
  name: string;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: number;
}

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
 * 4. insert all events in one statement and move every head forward in one statement;
 * 5. store the responses of requests that carry an Idempotency-Key, in the same transaction.
 * The unique (chain_id, position) constraint stays as the last line of defence.
 */
@Injectable()
export class ChainLedger {
  private readonly nextId = monotonicFactory();
  /** Chains whose row is known to be committed: their batches skip the create statement. */
  private readonly committedChains = new Set<string>();

  constructor(private readonly dataSource: DataSource) {}

  /** Appends `requests` in order; result i belongs to request i. Throws if nothing was written. */
  async append(requests: readonly AppendRequest[]): Promise<{ event: EventEntity; chainName: string }[]> {
    const { written, heads } = await this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const heads = await this.lockHeads(manager, requests);
      const written = requests.map((request) => this.nextEvent(request, heads));
      await this.insertEvents(
        manager,
        written.map((w) => w.event),
      );
      await this.moveHeads(manager, [...heads.values()]);
      await this.storeResponses(manager, requests, written);
      return { written, heads };
    });
    if (this.committedChains.size > 100_000) this.committedChains.clear();
    for (const key of heads.keys()) this.committedChains.add(key);
    return written;
  }

  private async lockHeads(manager: EntityManager, requests: readonly AppendRequest[]): Promise<Map<string, ChainHead>> {
    const wanted = new Map<string, { accountId: string; name: string }>();
    for (const r of requests)
      wanted.set(chainKey(r.accountId, r.chainName), { accountId: r.accountId, name: r.chainName });
    const chains = [...wanted.values()].sort((a, b) =>
      chainKey(a.accountId, a.name) < chainKey(b.accountId, b.name) ? -1 : 1,
    );
    const accounts = chains.map((c) => c.accountId);
    const names = chains.map((c) => c.name);
    const unknown = chains.filter((c) => !this.committedChains.has(chainKey(c.accountId, c.name)));
    if (unknown.length > 0) await this.createChains(manager, unknown);
    const rows = (await manager.query(
      `SELECT c.id, c.account_id, c.name, c.last_position, c.last_hash, c.last_timestamp
         FROM chains c JOIN unnest($1::varchar[], $2::varchar[]) AS w(account_id, name)
           ON c.account_id = w.account_id AND c.name = w.name
        ORDER BY c.id
          FOR UPDATE OF c`,
      [accounts, names],
    )) as {
      id: string;
      account_id: string;
      name: string;
      last_position: string;
      last_hash: string;
      last_timestamp: Date | null;
    }[];
    return new Map(
      rows.map((row) => [
        chainKey(row.account_id, row.name),
        {
          id: row.id,
          accountId: row.account_id,
          name: row.name,
          lastPosition: Number(row.last_position),
          lastHash: row.last_hash,
          lastTimestamp: row.last_timestamp?.getTime() ?? 0,
        },
      ]),
    );
  }

  /** A racing creator (another request or instance) wins: we wait for its commit and use its row. */
  private async createChains(manager: EntityManager, chains: { accountId: string; name: string }[]): Promise<void> {
    await manager.query(
      `INSERT INTO chains (id, account_id, name)
       SELECT w.id, w.account_id, w.name FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS w(id, account_id, name)
       WHERE NOT EXISTS (SELECT 1 FROM chains c WHERE c.account_id = w.account_id AND c.name = w.name)
       ON CONFLICT (account_id, name) DO NOTHING`,
      [chains.map(() => `chn_${this.nextId()}`), chains.map((c) => c.accountId), chains.map((c) => c.name)],
    );
  }

  private nextEvent(request: AppendRequest, heads: Map<string, ChainHead>): { event: EventEntity; chainName: string } {
    const head = heads.get(chainKey(request.accountId, request.chainName));
    if (!head) throw new Error(`chain head of '${request.chainName}' was not locked`);
    // Taken under the chain's lock and never behind the previous event, even if the clock steps back.
    const time = Math.max(Date.now(), head.lastTimestamp);
    const event = Object.assign(new EventEntity(), {
      id: `evt_${this.nextId()}`,
      accountId: request.accountId,
      chainId: head.id,
      position: head.lastPosition + 1,
      actor: request.actor,
      action: request.action,
      resource: request.resource,
      context: request.context,
      timestamp: new Date(time),
      previousHash: head.lastHash,
      hash: '',
    });
    event.hash = computeEventHash({ ...event, timestamp: event.timestamp.toISOString() });
    Object.assign(head, { lastPosition: event.position, lastHash: event.hash, lastTimestamp: time });
    return { event, chainName: head.name };
  }

  private async insertEvents(manager: EntityManager, events: EventEntity[]): Promise<void> {
    await manager.query(
      `INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
       SELECT id, account_id, chain_id, position, actor, action, resource, context::jsonb, ts, previous_hash, hash
         FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::int8[], $5::text[], $6::text[], $7::text[],
                     $8::text[], $9::timestamptz[], $10::text[], $11::text[])
           AS e(id, account_id, chain_id, position, actor, action, resource, context, ts, previous_hash, hash)`,
      [
        events.map((e) => e.id),
        events.map((e) => e.accountId),
        events.map((e) => e.chainId),
        events.map((e) => e.position),
        events.map((e) => e.actor),
        events.map((e) => e.action),
        events.map((e) => e.resource),
        events.map((e) => (e.context === null ? null : JSON.stringify(e.context))),
        events.map((e) => e.timestamp.toISOString()),
        events.map((e) => e.previousHash),
        events.map((e) => e.hash),
      ],
    );
  }

  private async storeResponses(
    manager: EntityManager,
    requests: readonly AppendRequest[],
    written: { event: EventEntity; chainName: string }[],
  ): Promise<void> {
    const keyed = requests.flatMap((r, i) => (r.idempotencyKey === null ? [] : [{ r, w: written[i]! }]));
    if (keyed.length === 0) return;
    await manager.query(
      `UPDATE idempotency_keys SET response = k.response
         FROM unnest($1::varchar[], $2::varchar[], $3::text[]) AS k(account_id, key, response)
        WHERE idempotency_keys.account_id = k.account_id AND idempotency_keys.key = k.key`,
      [
        keyed.map(({ r }) => r.accountId),
        keyed.map(({ r }) => r.idempotencyKey),
        keyed.map(({ w }) => JSON.stringify({ data: toEventView({ ...w.event, chainName: w.chainName }) })),
      ],
    );
  }

  private async moveHeads(manager: EntityManager, heads: ChainHead[]): Promise<void> {
    await manager.query(
      `UPDATE chains SET last_position = h.position, last_hash = h.hash, last_timestamp = h.ts
         FROM unnest($1::varchar[], $2::int8[], $3::text[], $4::timestamptz[]) AS h(id, position, hash, ts)
        WHERE chains.id = h.id`,
      [
        heads.map((h) => h.id),
        heads.map((h) => h.lastPosition),
        heads.map((h) => h.lastHash),
        heads.map((h) => new Date(h.lastTimestamp).toISOString()),
      ],
    );
  }
}
