import { ChainEntity } from '../entities/chain.entity';
import { EventEntity } from '../entities/event.entity';
import { joined, Table } from '../schema/table';

/** The tables of the events' read models, under the aliases every events query gives them. */
export const events = new Table(EventEntity, 'e');
export const chains = new Table(ChainEntity, 'c');

/**
 * The columns of a stored event and its chain's name (`chains` joined): every query that reads
 * whole events selects these, and its rows decode (int8 position to a number) to an EventRecord.
 */
export const EVENT_RECORD = joined(
  events.select(
    'id',
    'accountId',
    'chainId',
    'position',
    'actor',
    'action',
    'resource',
    'context',
    'timestamp',
    'previousHash',
    'hash',
    'saltSeed',
    'erasure',
  ),
  chains.selectAs({ chainName: 'name' }),
);

/** The one domain shape of a stored event (with its chain's name), whatever query read it. */
export type EventRecord = ReturnType<typeof EVENT_RECORD.decode>;
