import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Matches } from 'class-validator';
import {
  APPENDABLE_CHAIN_NAME,
  CHAIN_NAME,
  CHAIN_NAME_TEXT,
  MAX_ACTION_LENGTH,
  MAX_ACTOR_LENGTH,
  MAX_CONTEXT_BYTES,
  MAX_CONTEXT_DEPTH,
  MAX_CONTEXT_VALUES,
  MAX_RESOURCE_LENGTH,
  RESERVED_CHAIN_PREFIX,
} from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { IsEventText, IsStorable } from './storable.validator';

export const DEFAULT_CHAIN = 'default';

/** Body of POST /v1/events: exactly the spec's fields (docs/contract.md §4); any other member is a 400. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateEventDto {
  @ApiProperty({ description: 'Who did it', minLength: 1, maxLength: MAX_ACTOR_LENGTH, example: 'alice@example.com' })
  @IsEventText(MAX_ACTOR_LENGTH)
  actor!: string;

  @ApiProperty({ description: 'What they did', minLength: 1, maxLength: MAX_ACTION_LENGTH, example: 'invoice.approve' })
  @IsEventText(MAX_ACTION_LENGTH)
  action!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'What it was done to',
    minLength: 1,
    maxLength: MAX_RESOURCE_LENGTH,
    example: 'invoice:42',
  })
  @IsOptional()
  @IsEventText(MAX_RESOURCE_LENGTH)
  resource?: string | null;

  /** Kept exactly as parsed (bodies are never rebuilt: see the validation pipe). */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: `Any JSON object, stored and hashed exactly as sent: at most ${MAX_CONTEXT_BYTES / 1024} KiB, ${MAX_CONTEXT_DEPTH} levels deep and ${MAX_CONTEXT_VALUES} values (object members and array items, at any depth)`,
  })
  @IsOptional()
  @IsObject({ message: 'context must be a JSON object' })
  @IsStorable({ maxDepth: MAX_CONTEXT_DEPTH, maxBytes: MAX_CONTEXT_BYTES, maxValues: MAX_CONTEXT_VALUES })
  context?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    // No `default`: generated clients would then type the member as always present.
    description: `Name of the chain to append to (created on first use); absent or null means "${DEFAULT_CHAIN}". Names starting with ${RESERVED_CHAIN_PREFIX} are the service's own (_audit): 400`,
    pattern: CHAIN_NAME.source,
  })
  @IsOptional()
  @IsString()
  @Matches(CHAIN_NAME, { message: `chain must be ${CHAIN_NAME_TEXT}` })
  @Matches(APPENDABLE_CHAIN_NAME, { message: `chain names starting with ${RESERVED_CHAIN_PREFIX} are reserved` })
  chain?: string | null;
}
