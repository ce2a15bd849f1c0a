import { Repository, SelectQueryBuilder } from 'typeorm';
import { EVENTS_CURSOR } from '@app/common';
import { EventEntity } from '@app/database';
import { EventFiltersDto } from './dto/event-filters.dto';

export interface TimeBounds {
  inclusive: boolean;
}

/**
 * The account's events with the spec's filters, chain joined for its name. Every filter has an
 * index ending in (timestamp, id), so pages are index range scans however large the table.
 */
export function eventsQuery(
  repository: Repository<EventEntity>,
  accountId: string,
  filters: EventFiltersDto,
  { inclusive }: TimeBounds = { inclusive: false },
): SelectQueryBuilder<EventEntity> {
  const qb = repository
    .createQueryBuilder('e')
    .innerJoin('e.chain', 'c')
    .where('e.account_id = :accountId', { accountId });
  if (filters.actor !== undefined) qb.andWhere('e.actor = :actor', { actor: filters.actor });
  if (filters.action !== undefined) qb.andWhere('e.action = :action', { action: filters.action });
  if (filters.resource !== undefined) qb.andWhere('e.resource = :resource', { resource: filters.resource });
  if (filters.chain_id !== undefined) qb.andWhere('e.chain_id = :chainId', { chainId: filters.chain_id });
  if (filters.after !== undefined)
    qb.andWhere(`e.timestamp ${inclusive ? '>=' : '>'} :after`, { after: new Date(filters.after) });
  if (filters.before !== undefined)
    qb.andWhere(`e.timestamp ${inclusive ? '<=' : '<'} :before`, { before: new Date(filters.before) });
  return qb;
}

/** Rows strictly after the cursor's row in (timestamp, id) descending order. */
export function keysetBefore(qb: SelectQueryBuilder<EventEntity>, cursor: string): void {
  const key = EVENTS_CURSOR.decode(cursor);
  qb.andWhere('(e.timestamp, e.id) < (:cursorTime, :cursorId)', { cursorTime: key.time, cursorId: key.id });
}

/** Selects an EventRecord per row (chain name joined): plain rows, no entity hydration. */
export function selectEventRows(qb: SelectQueryBuilder<EventEntity>): SelectQueryBuilder<EventEntity> {
  return qb
    .select('e.id', 'id')
    .addSelect('e.chain_id', 'chainId')
    .addSelect('c.name', 'chainName')
    .addSelect('e.position', 'position')
    .addSelect('e.actor', 'actor')
    .addSelect('e.action', 'action')
    .addSelect('e.resource', 'resource')
    .addSelect('e.context', 'context')
    .addSelect('e.timestamp', 'timestamp')
    .addSelect('e.previous_hash', 'previousHash')
    .addSelect('e.hash', 'hash');
}
