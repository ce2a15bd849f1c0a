import { ApiProperty, OmitType } from '@nestjs/swagger';
import { IsIn, registerDecorator, ValidationArguments } from 'class-validator';
import { EventFiltersDto, IsInstant } from '../../events/dto/event-filters.dto';
import { DATE_TIME_TEXT, isInstant } from '@app/common';
import { compareInstants } from '../export-period';

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormatName = (typeof EXPORT_FORMATS)[number];

/** The period must not run backwards (a malformed bound is reported by its own rule). */
export function IsNotEarlierThan(start: string) {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isNotEarlierThan',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const from = (args.object as Record<string, unknown>)[start];
          return !isInstant(value) || !isInstant(from) || compareInstants(value, from) >= 0;
        },
        defaultMessage: (args: ValidationArguments) => `${args.property} must not be earlier than ${start}`,
      },
    });
  };
}

/** Query of GET /v1/events/export: the list filters, a required inclusive period and a format. */
export class ExportQueryDto extends OmitType(EventFiltersDto, ['after', 'before'] as const) {
  @ApiProperty({ enum: EXPORT_FORMATS })
  @IsIn(EXPORT_FORMATS, { message: 'format must be csv or json' })
  format!: ExportFormatName;

  @ApiProperty({
    description: `Period start, inclusive. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
  })
  @IsInstant(true)
  after!: string;

  @ApiProperty({
    description: `Period end, inclusive, not earlier than after. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-11-30T23:59:59.999Z',
  })
  @IsInstant(true)
  @IsNotEarlierThan('after')
  before!: string;
}
