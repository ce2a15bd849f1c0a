import { AddressInfo } from 'node:net';
import { AuditTrailClient } from '@audit-trail/client';
import { KEYS, TestApp } from './test-app';

/** The test app listening on a free port of 127.0.0.1: the client library talks HTTP, not supertest. */
export async function listening(t: TestApp): Promise<string> {
  const server = t.app.getHttpServer() as { listening: boolean; address: () => AddressInfo };
  if (!server.listening) await t.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${server.address().port}`;
}

export function clientOf(
  baseUrl: string,
  apiKey: string = KEYS.acme,
  fetch?: typeof globalThis.fetch,
): AuditTrailClient {
  return new AuditTrailClient({ baseUrl, apiKey, fetch });
}

/** One producer's events as stored: its sequence numbers in position order (context.n), per chain. */
export interface StoredEvent {
  id: string;
  chain: { id: string; name: string; position: number };
  context: { producer?: number; n?: number } | null;
}

/**
 * Checks what a run stored against what its producers recorded: each event (producer, n) at most
 * once, every n below `acknowledged[producer]` present, and along each chain the producer's order.
 */
export function checkExactlyOnce(
  events: StoredEvent[],
  acknowledged: number[],
): { stored: number; duplicates: string[]; missing: string[]; outOfOrder: string[] } {
  const seen = new Map<string, number>();
  const byChain = new Map<string, StoredEvent[]>();
  for (const e of events) {
    const key = `${e.context?.producer}:${e.context?.n}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    byChain.set(e.chain.id, [...(byChain.get(e.chain.id) ?? []), e]);
  }
  const duplicates = [...seen].filter(([, count]) => count > 1).map(([key]) => key);
  const missing = acknowledged.flatMap((count, producer) =>
    Array.from({ length: count }, (_, n) => `${producer}:${n}`).filter((key) => !seen.has(key)),
  );
  const outOfOrder: string[] = [];
  for (const [chainId, chain] of byChain) {
    const ns = chain.sort((a, b) => a.chain.position - b.chain.position).map((e) => e.context?.n ?? -1);
    if (ns.some((n, i) => i > 0 && n <= ns[i - 1]!)) outOfOrder.push(chainId);
  }
  return { stored: events.length, duplicates, missing, outOfOrder };
}
