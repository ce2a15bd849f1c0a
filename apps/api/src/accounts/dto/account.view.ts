import { ApiProperty } from '@nestjs/swagger';
import { ACCOUNT_ID, ACCOUNT_NAME } from '@app/common';
import { ApiLegalHoldBy, LegalHoldByView } from '../../openapi/legal-hold-by.property';

/** An account on the wire (docs/contract.md §12); the counts include its `_audit` chain. */
export class AccountView {
  @ApiProperty({ pattern: ACCOUNT_ID.source, example: 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ pattern: ACCOUNT_NAME.source, example: 'acme' })
  name!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  createdAt!: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events in all its chains', example: 1042 })
  eventCount!: number;

  @ApiProperty({ type: 'integer', minimum: 0, example: 3 })
  chainCount!: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When its newest event was appended; null without events',
    example: '2026-11-22T07:24:53.449Z',
  })
  lastEventAt!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Keys neither revoked nor expired', example: 2 })
  keyCount!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: 36500,
    description: 'Default retention of its chains in days (contract §14); null: forever',
  })
  retentionDays!: number | null;

  @ApiProperty({ description: 'Legal hold of the whole account: nothing of it is pruned while true' })
  legalHold!: boolean;

  @ApiLegalHoldBy('the account’s')
  legalHoldBy!: LegalHoldByView;
}
