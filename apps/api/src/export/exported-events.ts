import { Repository } from 'typeorm';
import { EventEntity } from '@app/database';
import { EventFiltersDto } from '../events/dto/event-filters.dto';
import { EventView } from '../events/dto/event.view';
import { eventsQuery } from '../events/event-query';
import { toEventView } from '../events/event.mapper';
import { Sql } from './export-snapshot';

/** One exported row as the driver returns it (bigint arrives as text). */
export interface ExportedRow {
  id: string;
  account_id: string;
  chain_id: string;
  chain_name: string;
  position: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: Date;
  previous_hash: string;
  hash: string;
}

/**
 * The list endpoint's query with inclusive bounds: once bare (for counting), once as the
 * export's rows, oldest first by (timestamp, id) on the (account, timestamp, id) index.
 */
export function exportedEvents(repository: Repository<EventEntity>, accountId: string, filters: EventFiltersDto): { matching: Sql; rows: Sql } {
  const query = () => eventsQuery(repository, accountId, filters, { inclusive: true });
  const [matching, matchingParams] = query().select('e.id').getQueryAndParameters();
  const [rows, rowParams] = query()
    .select('e.id', 'id')
    .addSelect('e.account_id', 'account_id')
    .addSelect('e.chain_id', 'chain_id')
    .addSelect('c.name', 'chain_name')
    .addSelect('e.position', 'position')
    .addSelect('e.actor', 'actor')
    .addSelect('e.action', 'action')
    .addSelect('e.resource', 'resource')
    .addSelect('e.context', 'context')
    .addSelect('e.timestamp', 'timestamp')
    .addSelect('e.previous_hash', 'previous_hash')
    .addSelect('e.hash', 'hash')
    .orderBy('e.timestamp', 'ASC')
    .addOrderBy('e.id', 'ASC')
    .getQueryAndParameters();
  return { matching: { text: matching, params: matchingParams }, rows: { text: rows, params: rowParams } };
}

export function toExportedView(row: ExportedRow): EventView {
  const event = Object.assign(new EventEntity(), {
    id: row.id,
    accountId: row.account_id,
    chainId: row.chain_id,
    position: Number(row.position),
    actor: row.actor,
    action: row.action,
    resource: row.resource,
    context: row.context,
    timestamp: row.timestamp,
    previousHash: row.previous_hash,
    hash: row.hash,
  });
  return toEventView(event, row.chain_name);
}
