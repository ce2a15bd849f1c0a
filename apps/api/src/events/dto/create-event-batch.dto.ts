import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray } from 'class-validator';
import { EachBodyItem, MAX_BATCH_EVENTS } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { CreateEventDto } from './create-event.dto';

const COUNT = `events must hold 1-${MAX_BATCH_EVENTS} events`;

/** Body of POST /v1/events/batch (docs/contract.md §9): each item exactly a POST /v1/events body, validated by the same code. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateEventBatchDto {
  @ApiProperty({
    type: [CreateEventDto],
    minItems: 1,
    maxItems: MAX_BATCH_EVENTS,
    description: 'Appended in this order, all or nothing; events of one chain get consecutive positions',
  })
  @IsArray()
  @ArrayMinSize(1, { message: COUNT })
  @ArrayMaxSize(MAX_BATCH_EVENTS, { message: COUNT })
  @EachBodyItem(CreateEventDto)
  events!: CreateEventDto[];
}
