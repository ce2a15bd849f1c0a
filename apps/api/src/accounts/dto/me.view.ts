import { ApiProperty } from '@nestjs/swagger';
import { ACCOUNT_ID, KEY_ID, SCOPES } from '@app/common';

/** GET /v1/me: who the key is, so a client knows what to offer. */
export class MeView {
  @ApiProperty({ pattern: ACCOUNT_ID.source, example: 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  accountId!: string;

  @ApiProperty({ example: 'acme' })
  accountName!: string;

  @ApiProperty({ pattern: KEY_ID.source, example: 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D3' })
  keyId!: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...SCOPES] }, example: ['ingest', 'read'] })
  scopes!: string[];
}
