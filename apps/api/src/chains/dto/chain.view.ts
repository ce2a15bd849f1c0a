import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';

/** The Chain resource on the wire (spec §2). */
export class ChainView {
  @ApiProperty({ example: 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ example: 'default' })
  name!: string;

  @ApiProperty({ description: 'Hash of the newest event', pattern: HEX_HASH.source })
  lastHash!: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Position of the newest event', example: 42 })
  lastPosition!: number;

  @ApiProperty({ type: 'integer', minimum: 0, example: 42 })
  eventCount!: number;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}
