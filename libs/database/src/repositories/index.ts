import { Provider } from '@nestjs/common';
import { TransactionRunner } from '../transaction-runner';
import { AccountsRepository } from './accounts.repository';
import { ActionSchemasRepository } from './action-schemas.repository';
import { ApiKeysRepository } from './api-keys.repository';
import { ChainHeadsRepository } from './chain-heads.repository';
import { ChainRetentionRepository } from './chain-retention.repository';
import { ChainsRepository } from './chains.repository';
import { CheckpointLogRepository } from './checkpoint-log.repository';
import { CheckpointsRepository } from './checkpoints.repository';
import { DestinationsRepository } from './destinations.repository';
import { ErasureResidueRepository } from './erasure-residue.repository';
import { ErasuresRepository } from './erasures.repository';
import { EventExportRepository } from './event-export.repository';
import { EventSearchRepository } from './event-search.repository';
import { EventStatisticsRepository } from './event-statistics.repository';
import { EventTailRepository } from './event-tail.repository';
import { EventVerificationRepository } from './event-verification.repository';
import { EventWritesRepository } from './event-writes.repository';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { MaintenanceRepository } from './maintenance.repository';
import { MerkleNodesRepository } from './merkle-nodes.repository';
import { OperatorReadsRepository } from './operator-reads.repository';
import { RetentionLogRepository } from './retention-log.repository';
import { RetentionPolicyRepository } from './retention-policy.repository';
import { VerificationWindowReader } from './verification-window.reader';

export * from './accounts.repository';
export * from './action-schemas.repository';
export * from './api-keys.repository';
export * from './chain-heads.repository';
export * from './chain-retention.repository';
export type { ChainRecord, ChainRetention, ChainStatusRecord, LegalHoldBy } from './chain-rows';
export * from './chains.repository';
export * from './checkpoint-log.repository';
export * from './checkpoints.repository';
export * from './destinations.repository';
export * from './erasure-residue.repository';
export * from './erasures.repository';
export * from './legal-hold-lock';
export * from './event-export.repository';
export type { EventFilters } from './event-filters.sql';
export type { EventRecord, EventSchemaRef } from './event-record';
export * from './event-search.repository';
export * from './event-statistics.repository';
export * from './event-tail.repository';
export * from './event-verification.repository';
export * from './event-writes.repository';
export * from './idempotency-keys.repository';
export * from './maintenance.repository';
export * from './merkle-nodes.repository';
export * from './operator-reads.repository';
export * from './retention-log.repository';
export * from './retention-policy.repository';
export * from './sql-query';
export * from './vacuum';
export * from './verification-window.queries';
export * from './verification-window.reader';

/**
 * One repository per table (Immich's `*.repository.ts`): each owns every query of its table,
 * raw SQL where it is faster, typed rows out. Services call repositories; only repositories and
 * the TransactionRunner touch TypeORM's DataSource, EntityManager or query builders. The events,
 * read far more than any other table and in many ways, have one repository per read model
 * (writes, search, statistics, live tail, export, verification; `event-filters.sql.ts` holds the
 * filters they share); so do the chains: ChainHeadsRepository (appends' locks and moves,
 * checkpoints' shared lock), ChainsRepository (listing, status, verification's reads),
 * ChainRetentionRepository (retention settings, legal hold, the sweep's prunes). Some span tables:
 * VerificationWindowReader, whose queries the verification worker threads share, and
 * MaintenanceRepository (VACUUM after a prune), ErasureResidueRepository (what an erasure leaves in the
 * database's files).
 */
export const REPOSITORIES: Provider[] = [
  TransactionRunner,
  AccountsRepository,
  ActionSchemasRepository,
  ApiKeysRepository,
  ChainHeadsRepository,
  ChainRetentionRepository,
  ChainsRepository,
  CheckpointLogRepository,
  CheckpointsRepository,
  DestinationsRepository,
  EventExportRepository,
  EventSearchRepository,
  EventStatisticsRepository,
  EventTailRepository,
  EventVerificationRepository,
  EventWritesRepository,
  IdempotencyKeysRepository,
  MaintenanceRepository,
  MerkleNodesRepository,
  OperatorReadsRepository,
  RetentionLogRepository,
  RetentionPolicyRepository,
  VerificationWindowReader,
  ErasuresRepository,
  ErasureResidueRepository,
];
