import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';

/** GET /v1/events/:id/proof (docs/contract.md §10): RFC 9162 §2.1.3 inclusion proof of the event's leaf. */
export class InclusionProofView {
  @ApiProperty()
  chainId!: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'The event’s position in its chain' })
  position!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'position − 1: the leaf’s index in the tree' })
  leafIndex!: number;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'The tree size the proof is for' })
  size!: number;

  @ApiProperty({
    pattern: HEX_HASH.source,
    description: 'The event’s hash: the leaf data (leaf hash = SHA-256(0x00 ‖ bytes))',
  })
  eventHash!: string;

  @ApiProperty({ pattern: HEX_HASH.source, description: 'The Merkle root of the first size events' })
  rootHash!: string;

  @ApiProperty({ type: [String], description: 'The audit path, leaf to root, 64 hex characters each' })
  proof!: string[];
}

/** GET /v1/chain/:chainId/consistency (docs/contract.md §10): RFC 9162 §2.1.4 consistency proof. */
export class ConsistencyProofView {
  @ApiProperty()
  chainId!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  from!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  to!: number;

  @ApiProperty({
    pattern: HEX_HASH.source,
    description: 'The Merkle root of the first from events (SHA-256("") for 0)',
  })
  fromRoot!: string;

  @ApiProperty({ pattern: HEX_HASH.source, description: 'The Merkle root of the first to events' })
  toRoot!: string;

  @ApiProperty({ type: [String], description: 'Empty when from is 0 or equals to; 64 hex characters each' })
  proof!: string[];
}
