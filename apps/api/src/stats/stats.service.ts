import { Injectable } from '@nestjs/common';
import { EventStatisticsRepository } from '@app/database';
import { exportPeriod } from '../export/export-period';
import { StatsQueryDto } from './dto/stats-query.dto';
import { StatsView } from './dto/stats.view';
import { toEventFilters } from '../events/event-filters';
import { BoundedReads } from '../reads/bounded-reads';

/**
 * Counts through the same filters as the list. EventStatisticsRepository reads them from the rollup
 * `event_counts` (per account, UTC day, chain and action, kept in step by triggers on `events`,
 * so no write path here has anything to do) for the whole days of the period when the group is
 * action, chain or day and the filters are only period, chain and action, and from the events
 * otherwise and for the partial days at the period's edges: the same answer either way. A
 * bounded read (BoundedReads: 429 beyond READS_PER_ACCOUNT, 422 past QUERY_TIMEOUT_SECONDS).
 */
@Injectable()
export class StatsService {
  constructor(
    private readonly events: EventStatisticsRepository,
    private readonly reads: BoundedReads,
  ) {}

  async countEvents(accountId: string, query: StatsQueryDto): Promise<StatsView> {
    const period = exportPeriod(query.after, query.before);
    const filters = { ...toEventFilters(query, period), ...period };
    const group = query.group_by;
    return this.reads.run(accountId, (db) =>
      group === 'hour' || group === 'day'
        ? this.events.countByTime(accountId, filters, group, db)
        : this.events.countBy(accountId, filters, group, query.limit, db),
    );
  }
}
