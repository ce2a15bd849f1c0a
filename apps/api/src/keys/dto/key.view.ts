import { ApiProperty } from '@nestjs/swagger';
import { KEY_ID, SCOPES } from '@app/common';

/** A key on the wire (docs/contract.md §12): never its secret nor its digest. */
export class KeyView {
  @ApiProperty({ pattern: KEY_ID.source, example: 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D3' })
  id!: string;

  @ApiProperty({ example: 'billing-service' })
  name!: string;

  @ApiProperty({ description: 'The first 8 characters of the secret', minLength: 8, maxLength: 8, example: 'ats_Xq3v' })
  prefix!: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...SCOPES] }, example: ['ingest', 'read'] })
  scopes!: string[];

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  createdAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  expiresAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  revokedAt!: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Written at most once a minute',
    example: '2026-11-22T07:24:53.449Z',
  })
  lastUsedAt!: string | null;
}

/** A key just made: the only answer that holds its secret. */
export class NewKeyView extends KeyView {
  @ApiProperty({
    description: 'The key itself, shown this once: only its SHA-256 digest is stored',
    example: 'ats_Xq3vM0p9dYV1fJt2bLkT8wQ4nR6sUe7hGc5aZiOyPxE',
  })
  secret!: string;
}
