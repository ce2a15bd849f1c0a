import { ApiProperty } from '@nestjs/swagger';

/** What one retention sweep pruned (docs/contract.md §14). */
export class SweepResultView {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Chains pruned' })
  chains!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events deleted' })
  events!: number;
}
