import { ApiProperty } from '@nestjs/swagger';
import type { SchemaMode } from '@app/database';
import { SCHEMA_MODES } from './put-schema.dto';

/** One version of an action's schema on the wire (docs/contract.md §19). */
export class SchemaView {
  @ApiProperty({ description: 'The action, or a prefix ending in .* (invoice.*)', example: 'invoice.approve' })
  action!: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: '1, 2, 3, … per action', example: 2 })
  version!: number;

  @ApiProperty({ enum: SCHEMA_MODES })
  mode!: SchemaMode;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      'The JSON Schema (2020-12) as saved; null: this version deleted the action’s schema (appends are then unchecked)',
  })
  schema!: Record<string, unknown> | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  createdAt!: string;

  @ApiProperty({ description: 'The key that made this version', example: 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  keyId!: string;
}

/** A version in an action's history (GET …/schemas/:action). */
export class SchemaVersionView {
  @ApiProperty({ type: 'integer', minimum: 1, example: 1 })
  version!: number;

  @ApiProperty({ enum: SCHEMA_MODES })
  mode!: SchemaMode;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  createdAt!: string;

  @ApiProperty({ example: 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  keyId!: string;
}

/** The latest version of an action's schema with its history. */
export class SchemaWithVersionsView extends SchemaView {
  @ApiProperty({ type: [SchemaVersionView], description: 'Every version, oldest first (deletions included)' })
  versions!: SchemaVersionView[];
}

/** An event a previewed schema would refuse, and why. */
export class PreviewExampleView {
  @ApiProperty({ example: 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  eventId!: string;

  @ApiProperty({ description: 'The path in { actor, resource, context }', example: 'context.amount' })
  field!: string;

  @ApiProperty({ example: 'must be >= 0 (minimum)' })
  message!: string;
}

/** What a candidate schema would do to the action's latest events (nothing stored). */
export class SchemaPreviewView {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events checked (at most limit)' })
  checked!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Of those, the events it would refuse under enforce' })
  rejected!: number;

  @ApiProperty({ type: [PreviewExampleView], description: 'The first ten refused, newest first' })
  examples!: PreviewExampleView[];
}
