import { Provider } from '@nestjs/common';
import { TransactionRunner } from '../transaction-runner';
import { AccountsRepository } from './accounts.repository';
import { ApiKeysRepository } from './api-keys.repository';
import { ChainHeadsRepository } from './chain-heads.repository';
import { ChainRetentionRepository } from './chain-retention.repository';
import { ChainsRepository } from './chains.repository';
import { CheckpointsRepository } from './checkpoints.repository';
import { DestinationsRepository } from './destinations.repository';
import { EventsRepository } from './events.repository';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { MerkleNodesRepository } from './merkle-nodes.repository';
import { RetentionLogRepository } from './retention-log.repository';
import { RetentionPolicyRepository } from './retention-policy.repository';
import { VerificationWindowReader } from './verification-window.reader';

export * from './accounts.repository';
export * from './api-keys.repository';
export * from './chain-heads.repository';
export * from './chain-retention.repository';
export type { ChainRecord, ChainRetention, ChainStatusRecord, LegalHoldBy } from './chain-rows';
export * from './chains.repository';
export * from './checkpoints.repository';
export * from './destinations.repository';
export * from './event-snapshot';
export * from './events.repository';
export * from './idempotency-keys.repository';
export * from './merkle-nodes.repository';
export * from './retention-log.repository';
export * from './retention-policy.repository';
export * from './sql-query';
export * from './vacuum';
export * from './verification-window.queries';
export * from './verification-window.reader';

/**
 * One repository per table (Immich's `*.repository.ts`): each owns every query of its table,
 * raw SQL where it is faster, typed rows out. Services call repositories; only repositories and
 * the TransactionRunner touch TypeORM's DataSource, EntityManager or query builders. One reader
 * spans tables: VerificationWindowReader, whose queries the verification worker threads share.
 * The chains have one per read model: ChainHeadsRepository (appends' locks and moves, checkpoints'
 * shared lock), ChainsRepository (listing, status, verification's reads), ChainRetentionRepository
 * (retention settings, legal hold, the sweep's prunes).
 */
export const REPOSITORIES: Provider[] = [
  TransactionRunner,
  AccountsRepository,
  ApiKeysRepository,
  ChainHeadsRepository,
  ChainRetentionRepository,
  ChainsRepository,
  CheckpointsRepository,
  DestinationsRepository,
  EventsRepository,
  IdempotencyKeysRepository,
  MerkleNodesRepository,
  RetentionLogRepository,
  RetentionPolicyRepository,
  VerificationWindowReader,
];
