import { DataSource } from 'typeorm';
import { computeEventHash, GENESIS_HASH } from '@app/hashing';

/**
 * Reads a chain straight from the database and checks it with the real hash: positions
 * 1..n without gaps or repeats, every previousHash equal to its predecessor's hash, every hash
 * recomputed from the stored payload, and the chain row's head equal to the last event.
 */
export async function assertChainIntact(dataSource: DataSource, chainId: string): Promise<number> {
  const events = (await dataSource.query(
    `SELECT id, chain_id, position::int AS position, actor, action, resource, context, "timestamp", previous_hash, hash
       FROM events WHERE chain_id = $1 ORDER BY position`,
    [chainId],
  )) as {
    id: string;
    chain_id: string;
    position: number;
    actor: string;
    action: string;
    resource: string | null;
    context: Record<string, unknown> | null;
    timestamp: Date;
    previous_hash: string;
    hash: string;
  }[];
  let previous = GENESIS_HASH;
  let lastTime = 0;
  events.forEach((e, index) => {
    expect(e.position).toBe(index + 1);
    expect(e.previous_hash).toBe(previous);
    expect(e.timestamp.getTime()).toBeGreaterThanOrEqual(lastTime);
    const recomputed = computeEventHash({
      id: e.id,
      chainId: e.chain_id,
      position: e.position,
      actor: e.actor,
      action: e.action,
      resource: e.resource,
      context: e.context,
      timestamp: e.timestamp.toISOString(),
      previousHash: e.previous_hash,
    });
    expect(recomputed).toBe(e.hash);
    previous = e.hash;
    lastTime = e.timestamp.getTime();
  });
  const [head] = (await dataSource.query(`SELECT last_position::int AS position, last_hash FROM chains WHERE id = $1`, [
    chainId,
  ])) as { position: number; last_hash: string }[];
  expect(head).toEqual({ position: events.length, last_hash: previous });
  return events.length;
}
