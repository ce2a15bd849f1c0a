import { DataSource } from 'typeorm';
import { EventHashPayload, GENESIS_HASH, recomputeStoredHash, StoredSecrets } from '@app/hashing';

/** A stored event of a chain, as the table holds it, under the names of the hashed payload. */
export interface StoredChainEvent extends Omit<EventHashPayload, 'timestamp'>, StoredSecrets {
  timestamp: Date;
  hash: string;
}

/** Anything that runs SQL: a DataSource, an EntityManager. */
type Queryable = Pick<DataSource, 'query'>;

/** A chain's events straight from the table, in position order. */
export async function readChainEvents(db: Queryable, chainId: string): Promise<StoredChainEvent[]> {
  return await db.query<StoredChainEvent[]>(
    `SELECT audit_uuid_ulid('evt', id) AS id, audit_uuid_ulid('chn', chain_id) AS "chainId", position::int AS position, actor, action, resource, context, "timestamp",
            encode(previous_hash, 'hex') AS "previousHash", encode(hash, 'hex') AS hash,
            encode(salt_seed, 'hex') AS "saltSeed", erasure
       FROM events WHERE chain_id = audit_ulid_uuid($1) ORDER BY position`,
    [chainId],
  );
}

/** The hash a stored event should have, recomputed from its payload by its version's rule (with this previousHash, if given). */
export function rehash(event: StoredChainEvent, previousHash = event.previousHash): string {
  const hash = recomputeStoredHash({ ...event, timestamp: event.timestamp.toISOString(), previousHash });
  if (hash === null) throw new Error(`event ${event.id}: its stored values, salts and commitments determine no hash`);
  return hash;
}

/**
 * Reads a chain straight from the database and checks it with the real hash: positions
 * 1..n without gaps or repeats, every previousHash equal to its predecessor's hash, every hash
 * recomputed from the stored payload, and the chain row's head equal to the last event.
 */
export async function assertChainIntact(dataSource: DataSource, chainId: string): Promise<number> {
  const events = await readChainEvents(dataSource, chainId);
  let previous = GENESIS_HASH;
  let lastTime = 0;
  events.forEach((e, index) => {
    expect(e.position).toBe(index + 1);
    expect(e.previousHash).toBe(previous);
    expect(e.timestamp.getTime()).toBeGreaterThanOrEqual(lastTime);
    expect(rehash(e)).toBe(e.hash);
    previous = e.hash;
    lastTime = e.timestamp.getTime();
  });
  const [head] = await dataSource.query<{ position: number; last_hash: string }[]>(
    `SELECT last_position::int AS position, encode(last_hash, 'hex') AS last_hash FROM chains WHERE id = audit_ulid_uuid($1)`,
    [chainId],
  );
  expect(head).toEqual({ position: events.length, last_hash: previous });
  return events.length;
}
