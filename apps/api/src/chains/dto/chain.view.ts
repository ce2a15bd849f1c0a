import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';
import { ApiLegalHoldBy, LegalHoldByView } from '../../openapi/legal-hold-by.property';

/** The Chain resource on the wire (docs/contract.md §2). */
export class ChainView {
  @ApiProperty({ example: 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ example: 'default' })
  name!: string;

  @ApiProperty({
    type: 'integer',
    enum: [1, 2],
    description:
      'How its events are hashed: 2 (salted commitments of the personal fields, erasable: docs/contract.md §17) for chains created since then, 1 (docs/contract.md §3) before',
  })
  hashVersion!: 1 | 2;

  @ApiProperty({ description: 'Hash of the newest event', pattern: HEX_HASH.source })
  lastHash!: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Position of the newest event', example: 42 })
  lastPosition!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Retained events (lastPosition − firstPosition + 1)',
    example: 42,
  })
  eventCount!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'The first retained position: 1 until a prune, lastPosition + 1 when every event was pruned',
    example: 1,
  })
  firstPosition!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The chain’s own retention in days; null: follow the account',
  })
  retentionDays!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      'The retention that applies (own, else the account’s; for `_audit`, never below AUDIT_MIN_RETENTION_DAYS); null: forever',
  })
  effectiveRetentionDays!: number | null;

  @ApiProperty({ description: 'The chain’s own legal hold' })
  legalHold!: boolean;

  @ApiLegalHoldBy('the chain’s own')
  legalHoldBy!: LegalHoldByView;

  @ApiProperty({ description: 'Its own legal hold or its account’s: nothing is pruned while true' })
  effectiveLegalHold!: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}
