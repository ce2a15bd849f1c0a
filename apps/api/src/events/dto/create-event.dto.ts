import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { IsStorable } from './storable.validator';

export const DEFAULT_CHAIN = 'default';
export const MAX_CONTEXT_BYTES = 32 * 1024;
export const MAX_CONTEXT_DEPTH = 32;

/** Body of POST /v1/events: exactly the spec's fields (contract §4); any other member is a 400. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateEventDto {
  @ApiProperty({ description: 'Who did it', minLength: 1, maxLength: 256, example: 'alice@example.com' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorable()
  actor!: string;

  @ApiProperty({ description: 'What they did', minLength: 1, maxLength: 256, example: 'invoice.approve' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @IsStorable()
  action!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'What it was done to',
    minLength: 1,
    maxLength: 512,
    example: 'invoice:42',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  @IsStorable()
  resource?: string | null;

  /** Kept exactly as parsed: class-transformer must not rebuild it (it would drop "__proto__"). */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: `Any JSON object, stored and hashed exactly as sent: at most ${MAX_CONTEXT_BYTES / 1024} KiB and ${MAX_CONTEXT_DEPTH} levels deep`,
  })
  @IsOptional()
  @Transform(({ obj }: { obj: Record<string, unknown> }) => obj.context, { toClassOnly: true })
  @IsObject({ message: 'context must be a JSON object' })
  @IsStorable({ maxDepth: MAX_CONTEXT_DEPTH, maxBytes: MAX_CONTEXT_BYTES })
  context?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    // No `default`: generated clients would then type the member as always present.
    description: `Name of the chain to append to (created on first use); absent or null means "${DEFAULT_CHAIN}"`,
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9._:-]{1,128}$/, { message: 'chain must be 1-128 characters of A-Z a-z 0-9 . _ : -' })
  chain?: string | null;
}
