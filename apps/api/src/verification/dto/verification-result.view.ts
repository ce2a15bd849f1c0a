import { ApiProperty } from '@nestjs/swagger';
import { HEX_HASH } from '@app/hashing';

/** The Verification result on the wire (docs/contract.md §2, §4). */
export class VerificationResultView {
  @ApiProperty({
    description:
      'The stored hash matches the recomputed one, the event links to its predecessor and is not earlier than it',
  })
  valid!: boolean;

  @ApiProperty({ type: [String] })
  errors!: string[];

  @ApiProperty({ pattern: HEX_HASH.source })
  eventHash!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    pattern: HEX_HASH.source,
    description:
      'The hash recomputed from the stored event; null when its stored values, salts and commitments determine none (an altered version-2 event)',
  })
  computedHash!: string | null;

  @ApiProperty({
    description:
      'The event links to its predecessor (or to the genesis hash at position 1) and its timestamp is not earlier',
  })
  chainIntact!: boolean;

  @ApiProperty({ format: 'date-time' })
  verifiedAt!: string;

  @ApiProperty({
    type: [String],
    required: false,
    description:
      'Version-2 events only (docs/contract.md §17): the erased field paths, whose kept commitments the hash was recomputed with; [] before any erasure',
  })
  erased?: string[];
}
