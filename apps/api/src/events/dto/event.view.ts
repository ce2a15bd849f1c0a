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

const SALT = '^[0-9a-f]{32}$';

/** A value per personal field of a version-2 event (docs/contract.md §17): salts, or commitments. */
export class EventFieldValues {
  @ApiProperty({ required: false })
  actor?: string;

  @ApiProperty({ required: false })
  resource?: string;

  @ApiProperty({
    required: false,
    type: Object,
    additionalProperties: { type: 'string' },
    description: 'By member of `context`',
  })
  context?: Record<string, string>;
}

/** The action schema version that checked an event on append (docs/contract.md §19), outside its hash. */
export class EventSchemaView {
  @ApiProperty({
    description: 'The schema’s action pattern that applied (`invoice.approve` or `invoice.*`)',
    example: 'invoice.*',
  })
  action!: string;

  @ApiProperty({ type: 'integer', minimum: 1, example: 3 })
  version!: number;

  @ApiProperty({ description: 'Whether the event satisfied it (false only under a `warn` schema)' })
  valid!: boolean;
}

/** How a version-2 event's hash is recomputed (docs/hashing.md, "Version 2"). */
export class EventHashing {
  @ApiProperty({ type: 'integer', enum: [2] })
  version!: 2;

  @ApiProperty({
    type: EventFieldValues,
    description: `The salt (${SALT}) of each field that holds a value: \`actor\`, \`resource\` (when not null), \`context\` by member`,
  })
  salts!: EventFieldValues;

  @ApiProperty({
    type: EventFieldValues,
    description: `The commitment (${HEX_HASH.source}) of each erased field, in place of its value and salt; {} before any erasure`,
  })
  commitments!: EventFieldValues;
}

/** The Event resource on the wire (docs/contract.md §2). */
export class EventView {
  @ApiProperty({ example: 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'alice@example.com',
    description: 'null once erased (version-2 events: docs/contract.md §17)',
  })
  actor!: string | null;

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

  @ApiProperty({
    type: EventHashing,
    required: false,
    description: 'Version-2 events only (chains with hashVersion 2): the salts and commitments their hash covers',
  })
  hashing?: EventHashing;

  @ApiProperty({
    type: [String],
    required: false,
    description:
      'Version-2 events only: the erased field paths (`actor`, `resource`, `context.<m>`); [] before any erasure',
  })
  erased?: string[];

  @ApiProperty({
    type: EventSchemaView,
    required: false,
    description:
      'Present when an action schema applied to the event on append (docs/contract.md §19): which version checked it and whether it held. Not covered by the hash',
  })
  schema?: EventSchemaView;
}
