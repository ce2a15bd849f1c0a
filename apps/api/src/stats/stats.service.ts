import { Injectable } from '@nestjs/common';
import { EventsRepository } from '@app/database';
import { exportPeriod } from '../export/export-period';
import { StatsQueryDto } from './dto/stats-query.dto';
import { StatsView } from './dto/stats.view';
import { toEventFilters } from '../events/event-filters';

/**
 * Counts computed from the events at request time, through the same filters as the list: the
 * grouping columns each lead an index after the account, so a group's count is an index-only
 * range, and nothing is written beside the append (no rollup to keep in step, prune or verify).
 */
@Injectable()
export class StatsService {
  constructor(private readonly events: EventsRepository) {}

  async countEvents(accountId: string, query: StatsQueryDto): Promise<StatsView> {
    const period = exportPeriod(query.after, query.before);
    const filters = { ...toEventFilters(query, period), ...period };
    const group = query.group_by;
    return group === 'hour' || group === 'day'
      ? this.events.countByTime(accountId, filters, group)
      : this.events.countBy(accountId, filters, group, query.limit);
  }
}
