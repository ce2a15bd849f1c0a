import { IntersectionType } from '@nestjs/swagger';
import { PageQueryDto } from '@app/common';
import { EventFiltersDto } from './event-filters.dto';

export class ListEventsQuery extends IntersectionType(EventFiltersDto, PageQueryDto) {}
