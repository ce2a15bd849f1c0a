import { IntersectionType } from '@nestjs/mapped-types';
import { PageQueryDto } from '@app/common';
import { EventFiltersDto } from './event-filters.dto';

export class ListEventsQuery extends IntersectionType(EventFiltersDto, PageQueryDto) {}
