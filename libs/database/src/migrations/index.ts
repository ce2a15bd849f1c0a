import { IdempotencyKeys1763900000000 } from './1763900000000-idempotency-keys';
import { InitialSchema1763798400000 } from './1763798400000-initial-schema';
import { AppendOnlyAndCheckpoints1763800000000 } from './1763800000000-append-only-and-checkpoints';
import { TimestampOrder1764000000000 } from './1764000000000-timestamp-order';
import { MerkleNodes1764100000000 } from './1764100000000-merkle-nodes';
import { MerkleNodesWithoutFk1764200000000 } from './1764200000000-merkle-nodes-without-fk';
import { MerkleLeavesFromEvents1764300000000 } from './1764300000000-merkle-leaves-from-events';
import { MerklePairsFromEvents1764400000000 } from './1764400000000-merkle-pairs-from-events';
import { EventTransactionIds1764600000000 } from './1764600000000-event-transaction-ids';
import { EventContextIndex1764700000000 } from './1764700000000-event-context-index';
import { KeysOverHttp1764520000000 } from './1764520000000-keys-over-http';
import { Retention1764800000000 } from './1764800000000-retention';
import { EventCounts1764900000000 } from './1764900000000-event-counts';
import { RetentionLog1765000000000 } from './1765000000000-retention-log';
import { Destinations1765100000000 } from './1765100000000-destinations';
import { EventPageIndexes1765200000000 } from './1765200000000-event-page-indexes';
import { BinaryHashes1765300000000 } from './1765300000000-binary-hashes';
import { HashVersion21765400000000 } from './1765400000000-hash-version-2';
import { CheckpointLog1765500000000 } from './1765500000000-checkpoint-log';
import { Erasure1765600000000 } from './1765600000000-erasure';
import { ChainPositionLookups1765700000000 } from './1765700000000-chain-position-lookups';
import { CheckpointLogAppendOnly1765800000000 } from './1765800000000-checkpoint-log-append-only';
import { BinaryIds1765900000000 } from './1765900000000-binary-ids';
import { ErasureRecord1766000000000 } from './1766000000000-erasure-record';
import { DestinationBackoff1766050000000 } from './1766050000000-destination-backoff';
import { IndexFill1766100000000 } from './1766100000000-index-fill';
import { ActionSchemas1766200000000 } from './1766200000000-action-schemas';
import { SearchPathTempLast1766300000000 } from './1766300000000-search-path-temp-last';

/** Every migration, in order. New ones are appended here after review. */
export const MIGRATIONS = [
  InitialSchema1763798400000,
  AppendOnlyAndCheckpoints1763800000000,
  IdempotencyKeys1763900000000,
  TimestampOrder1764000000000,
  MerkleNodes1764100000000,
  MerkleNodesWithoutFk1764200000000,
  MerkleLeavesFromEvents1764300000000,
  MerklePairsFromEvents1764400000000,
  KeysOverHttp1764520000000,
  EventTransactionIds1764600000000,
  EventContextIndex1764700000000,
  Retention1764800000000,
  EventCounts1764900000000,
  RetentionLog1765000000000,
  Destinations1765100000000,
  EventPageIndexes1765200000000,
  BinaryHashes1765300000000,
  HashVersion21765400000000,
  CheckpointLog1765500000000,
  Erasure1765600000000,
  ChainPositionLookups1765700000000,
  CheckpointLogAppendOnly1765800000000,
  BinaryIds1765900000000,
  ErasureRecord1766000000000,
  DestinationBackoff1766050000000,
  IndexFill1766100000000,
  ActionSchemas1766200000000,
  SearchPathTempLast1766300000000,
];
