import { ApiProperty } from '@nestjs/swagger';

/** GET /v1/witnesses (docs/contract.md §18): one listed witness. */
export class WitnessView {
  @ApiProperty({ description: 'The name of its key (what its cosignature lines carry)' })
  name!: string;

  @ApiProperty({ description: 'Its cosignature/v1 verifier key, as configured' })
  key!: string;

  @ApiProperty({ description: 'Its tlog-witness URL prefix' })
  url!: string;
}

/** GET /v1/chain/:chainId/checkpoint/witnessed (docs/contract.md §18). */
export class WitnessedCheckpointView {
  @ApiProperty({ description: 'The chain checkpoint (signed note), as GET …/checkpoint served it: the leaf data' })
  checkpoint!: string;

  @ApiProperty({ description: 'The log checkpoint that includes it, with every valid cosignature line' })
  logCheckpoint!: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'The chain checkpoint’s leaf index in the checkpoint log' })
  leafIndex!: number;

  @ApiProperty({
    type: [String],
    description: 'The inclusion proof (RFC 9162) of the leaf in the log checkpoint’s tree, 64 hex characters each',
  })
  proof!: string[];

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Valid cosignatures of listed witnesses' })
  witnesses!: number;
}
