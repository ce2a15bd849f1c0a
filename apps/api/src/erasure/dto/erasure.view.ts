import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { ACCOUNT_ID, ERASURE_ID, PageQueryDto } from '@app/common';

/** The answer to POST /v1/erasures (docs/contract.md §17). */
export class ErasureResultView {
  @ApiProperty({ pattern: ERASURE_ID.source })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'The events erased' })
  events!: number;

  @ApiProperty({ type: [String], description: 'The field paths, as asked' })
  fields!: string[];

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Matching events on version-1 chains, left as they were (allowPartial)',
  })
  skipped!: number;
}

/** The answer to a dry run of POST /v1/erasures: what would be erased; nothing is. */
export class ErasureDryRunView {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'The events that would be erased' })
  events!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Matching events on version-1 chains (allowPartial)' })
  skipped!: number;

  @ApiProperty({ enum: [true] })
  dryRun!: true;
}

/** A past erasure, as GET /v1/erasures lists it: never the query. */
export class ErasureView {
  @ApiProperty({ pattern: ERASURE_ID.source })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The id of the key that erased; null for an erasure made by calling the database function by hand',
  })
  keyId!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  events!: number;

  @ApiProperty({ type: [String] })
  fields!: string[];

  @ApiProperty({ type: String, nullable: true, description: 'Null for an erasure made by hand' })
  reason!: string | null;
}

/** GET /v1/erasures: `limit`, `cursor` and (an operator's) `accountId`, newest first. */
export class ListErasuresQuery extends PageQueryDto {
  @ApiPropertyOptional({
    pattern: ACCOUNT_ID.source,
    description:
      'The account whose erasures are listed: required of an operator key; an admin key may name only its own',
  })
  @IsOptional()
  @IsString()
  @Matches(ACCOUNT_ID, { message: 'accountId must be an account id (acc_ and a ULID)' })
  accountId?: string;
}
