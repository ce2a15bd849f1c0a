import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';
import type { ChainVerificationError as Finding, ChainVerificationResult } from '@app/verification';

export class ChainVerificationError implements Finding {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'The position the error is about (for a gap: the first missing position)',
  })
  position!: number;

  @ApiProperty({ type: String, nullable: true, description: 'The event at that position, or null when it is missing' })
  eventId!: string | null;

  @ApiProperty()
  message!: string;
}

/** GET /v1/chain/:chainId/verify */
export class ChainVerificationView implements ChainVerificationResult {
  @ApiProperty({ description: 'True exactly when errorCount is 0' })
  valid!: boolean;

  @ApiProperty()
  chainId!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  checkedEvents!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Position of the last event walked (0 when there was none)',
  })
  lastPosition!: number;

  @ApiProperty({
    pattern: HEX_HASH.source,
    description: 'Hash of the last event walked (64 zeros when there was none)',
  })
  lastHash!: string;

  @ApiProperty({ type: 'integer', minimum: 1, nullable: true })
  firstInvalidPosition!: number | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  checkpointsChecked!: number;

  @ApiProperty({ type: [ChainVerificationError], description: 'At most 100, in the order found' })
  errors!: ChainVerificationError[];

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'How many errors were found in all; more than errors.length when errorsTruncated',
  })
  errorCount!: number;

  @ApiProperty()
  errorsTruncated!: boolean;

  @ApiProperty({ format: 'date-time' })
  verifiedAt!: string;
}
