import { AccountEntity } from './account.entity';
import { ActionSchemaEntity } from './action-schema.entity';
import { ApiKeyEntity } from './api-key.entity';
import { ChainEntity } from './chain.entity';
import { CheckpointEntity } from './checkpoint.entity';
import {
  CheckpointLogCheckpointEntity,
  CheckpointLogCosignatureEntity,
  CheckpointLogLeafEntity,
  CheckpointLogNodeEntity,
} from './checkpoint-log.entity';
import { DestinationEntity } from './destination.entity';
import { ErasureEventEntity } from './erasure-event.entity';
import { ErasureEntity } from './erasure.entity';
import { EventCountEntity } from './event-count.entity';
import { EventEntity } from './event.entity';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { MerkleNodeEntity } from './merkle-node.entity';
import { RetentionLogEntity } from './retention-log.entity';
import { RetentionPolicyEntity } from './retention-policy.entity';

export * from './account.entity';
export * from './action-schema.entity';
export * from './api-key.entity';
export * from './chain.entity';
export * from './checkpoint.entity';
export * from './checkpoint-log.entity';
export * from './destination.entity';
export * from './erasure.entity';
export * from './erasure-event.entity';
export * from './event-count.entity';
export * from './event.entity';
export * from './index-storage';
export * from './idempotency-key.entity';
export * from './merkle-node.entity';
export * from './retention-log.entity';
export * from './retention-policy.entity';

/** Every table, described exactly as the migrations create it (`npm run migration:check` holds them to it). */
export const ENTITIES = [
  AccountEntity,
  ApiKeyEntity,
  ChainEntity,
  EventEntity,
  ErasureEntity,
  ErasureEventEntity,
  EventCountEntity,
  CheckpointEntity,
  IdempotencyKeyEntity,
  MerkleNodeEntity,
  RetentionLogEntity,
  RetentionPolicyEntity,
  DestinationEntity,
  CheckpointLogLeafEntity,
  CheckpointLogNodeEntity,
  CheckpointLogCheckpointEntity,
  CheckpointLogCosignatureEntity,
  ActionSchemaEntity,
];
