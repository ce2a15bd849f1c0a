import { Repository } from 'typeorm';
import { EventEntity } from '@app/database';
import { EventFiltersDto } from '../events/dto/event-filters.dto';
import { eventsQuery, selectEventRows } from '../events/event-query';
import { Sql } from './export-snapshot';

/**
 * The list endpoint's query with inclusive bounds: once bare (for counting), once as the
 * export's rows, oldest first by (timestamp, id) on the (account, timestamp, id) index.
 */
export function exportedEvents(
  repository: Repository<EventEntity>,
  accountId: string,
  filters: EventFiltersDto,
): { matching: Sql; rows: Sql } {
  const query = () => eventsQuery(repository, accountId, filters, { inclusive: true });
  const [matching, matchingParams] = query().select('e.id').getQueryAndParameters();
  const [rows, rowParams] = selectEventRows(query())
    .orderBy('e.timestamp', 'ASC')
    .addOrderBy('e.id', 'ASC')
    .getQueryAndParameters();
  return { matching: { text: matching, params: matchingParams }, rows: { text: rows, params: rowParams } };
}
