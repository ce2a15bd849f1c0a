import { AccountEntity } from './account.entity';
import { ApiKeyEntity } from './api-key.entity';
import { ChainEntity } from './chain.entity';
import { CheckpointEntity } from './checkpoint.entity';
import { EventEntity } from './event.entity';
import { MerkleNodeEntity } from './merkle-node.entity';

export * from './account.entity';
export * from './api-key.entity';
export * from './chain.entity';
export * from './checkpoint.entity';
export * from './event.entity';
export * from './merkle-node.entity';

export const ENTITIES = [AccountEntity, ApiKeyEntity, ChainEntity, EventEntity, CheckpointEntity, MerkleNodeEntity];
