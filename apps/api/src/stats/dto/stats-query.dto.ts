import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min, registerDecorator, ValidationArguments } from 'class-validator';
import { EventFiltersDto, IsInstant } from '../../events/dto/event-filters.dto';
import { DATE_TIME_TEXT, instantMillis, isInstant } from '@app/common';
import { IsNotEarlierThan } from '../../export/dto/export-query.dto';

export const STATS_GROUPS = ['action', 'actor', 'resource', 'chain', 'hour', 'day'] as const;
export type StatsGroup = (typeof STATS_GROUPS)[number];
/** The longest period one request may count over, in days (docs/contract.md §13). */
export const MAX_STATS_DAYS = 366;
export const MAX_STATS_LIMIT = 1000;
const DEFAULT_STATS_LIMIT = 50;
const LIMIT_MESSAGE = `limit must be an integer between 1 and ${MAX_STATS_LIMIT}`;

/** At most `days` days after the field `start` (a malformed bound is reported by its own rule). */
function IsWithinDaysOf(start: string, days: number) {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isWithinDaysOf',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const from = (args.object as Record<string, unknown>)[start];
          return (
            !isInstant(value) || !isInstant(from) || instantMillis(value)! - instantMillis(from)! <= days * 86_400_000
          );
        },
        defaultMessage: (args: ValidationArguments) => `${args.property} must be at most ${days} days after ${start}`,
      },
    });
  };
}

/** GET /v1/stats/events: the list's filters and q, a required inclusive period, a grouping. */
export class StatsQueryDto extends OmitType(EventFiltersDto, ['after', 'before'] as const) {
  @ApiProperty({
    description: `Period start, inclusive. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
  })
  @IsInstant(true)
  after!: string;

  @ApiProperty({
    description: `Period end, inclusive, not earlier than after and at most ${MAX_STATS_DAYS} days after it. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-11-30T23:59:59.999Z',
  })
  @IsInstant(true)
  @IsNotEarlierThan('after')
  @IsWithinDaysOf('after', MAX_STATS_DAYS)
  before!: string;

  @ApiProperty({
    enum: STATS_GROUPS,
    description: 'What to count by; `chain` counts by chain id, `hour` and `day` by UTC bucket (every bucket present)',
  })
  @IsIn(STATS_GROUPS, { message: `group_by must be one of ${STATS_GROUPS.join(', ')}` })
  group_by!: StatsGroup;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_STATS_LIMIT,
    default: DEFAULT_STATS_LIMIT,
    description: 'For action, actor, resource and chain: the largest counts, ties by key. Ignored for hour and day.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(MAX_STATS_LIMIT, { message: LIMIT_MESSAGE })
  limit: number = DEFAULT_STATS_LIMIT;
}
