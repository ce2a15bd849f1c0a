import { ApiProperty } from '@nestjs/swagger';

/** An account's retention settings (contract §14: `Account` shows `retentionDays` and `legalHold`). */
export class AccountSettingsView {
  @ApiProperty({ example: 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ example: 'acme' })
  name!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Default retention of its chains; null: forever' })
  retentionDays!: number | null;

  @ApiProperty()
  legalHold!: boolean;
}
