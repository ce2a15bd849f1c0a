import { IdempotencyKeys1763900000000 } from './1763900000000-idempotency-keys';
import { InitialSchema1763798400000 } from './1763798400000-initial-schema';
import { AppendOnlyAndCheckpoints1763800000000 } from './1763800000000-append-only-and-checkpoints';
import { TimestampOrder1764000000000 } from './1764000000000-timestamp-order';
import { MerkleNodes1764100000000 } from './1764100000000-merkle-nodes';

/** Every migration, in order. New ones are appended here after review. */
export const MIGRATIONS = [
  InitialSchema1763798400000,
  AppendOnlyAndCheckpoints1763800000000,
  IdempotencyKeys1763900000000,
  TimestampOrder1764000000000,
  MerkleNodes1764100000000,
];
