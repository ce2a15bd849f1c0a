import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';

/** The Verification result on the wire (spec §2, contract §4). */
export class VerificationResultView {
  @ApiProperty({ description: 'The stored hash matches the recomputed one and the event links to its predecessor' })
  valid!: boolean;

  @ApiProperty({ type: [String] })
  errors!: string[];

  @ApiProperty({ pattern: HEX_HASH.source })
  eventHash!: string;

  @ApiProperty({ pattern: HEX_HASH.source })
  computedHash!: string;

  @ApiProperty()
  chainIntact!: boolean;

  @ApiProperty({ format: 'date-time' })
  verifiedAt!: string;
}
