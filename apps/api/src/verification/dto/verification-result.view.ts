import { ApiProperty } from '@nestjs/swagger';

/** The Verification result on the wire (spec §2, contract §4). */
export class VerificationResultView {
  @ApiProperty({ description: 'The stored hash matches the recomputed one and the event links to its predecessor' })
  valid!: boolean;

  @ApiProperty({ type: [String] })
  errors!: string[];

  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  eventHash!: string;

  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  computedHash!: string;

  @ApiProperty()
  chainIntact!: boolean;

  @ApiProperty({ format: 'date-time' })
  verifiedAt!: string;
}
