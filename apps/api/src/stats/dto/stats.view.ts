import { ApiProperty } from '@nestjs/swagger';

export class StatsBucketView {
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The group: an action, actor or resource (null: events without a resource), a chain id, or the UTC start of an hour or day',
    example: 'order.created',
  })
  key!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  count!: number;
}

export class StatsView {
  @ApiProperty({
    type: [StatsBucketView],
    description: 'Largest counts first (ties by key); time buckets oldest first, zeros included',
  })
  data!: StatsBucketView[];

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Every matching event, in or beyond the listed groups' })
  total!: number;
}
