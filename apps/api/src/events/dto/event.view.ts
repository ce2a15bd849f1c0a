import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';

/** The chain an event belongs to, and its place in it. */
export class EventChainRef {
  @ApiProperty({ example: 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ example: 'default' })
  name!: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Position in the chain, from 1', example: 42 })
  position!: number;
}

/** The Event resource on the wire (docs/contract.md §2). */
export class EventView {
  @ApiProperty({ example: 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ example: 'alice@example.com' })
  actor!: string;

  @ApiProperty({ example: 'invoice.approve' })
  action!: string;

  @ApiProperty({ type: String, nullable: true, example: 'invoice:42' })
  resource!: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Stored and returned exactly as sent',
  })
  context!: Record<string, unknown> | null;

  @ApiProperty({ type: EventChainRef })
  chain!: EventChainRef;

  @ApiProperty({ description: 'hex(SHA-256(JCS(payload))), see docs/hashing.md', pattern: HEX_HASH.source })
  hash!: string;

  @ApiProperty({
    description: 'The previous event’s hash; 64 zeros for the first event of a chain',
    pattern: HEX_HASH.source,
  })
  previousHash!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  timestamp!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  createdAt!: string;
}
