import { ChainEntity } from '../entities/chain.entity';
import { EventEntity } from '../entities/event.entity';
import { computed, Decoder, joined, Table } from '../schema/table';

/** The tables of the events' read models, under the aliases every events query gives them. */
export const events = new Table(EventEntity, 'e');
export const chains = new Table(ChainEntity, 'c');

/**
 * The action schema version that checked an event on append (docs/contract.md §19): its row's id
 * (what the event stores), the action pattern and version number it was saved as, and whether the
 * event satisfied it. Null for an event whose action had no schema.
 */
export interface EventSchemaRef {
  id: number;
  action: string;
  version: number;
  valid: boolean;
}

const asSchemaRef: Decoder<EventSchemaRef | null> = (raw) => {
  if (raw === null || raw === undefined) return null;
  const { id, action, version, valid } = raw as Partial<EventSchemaRef>;
  if (typeof id !== 'number' || typeof action !== 'string' || typeof version !== 'number' || typeof valid !== 'boolean')
    throw new Error('expected an action schema reference from the database');
  return { id, action, version, valid };
};

/**
 * The event's schema reference: the version's pattern and number, read from action_schemas by the
 * id the event stores (one primary-key probe, only for events that have one).
 */
const SCHEMA_REF = computed({
  schema: [
    `CASE WHEN ${events.column('schemaId')} IS NOT NULL THEN
       (SELECT json_build_object('id', s.id, 'action', s.action, 'version', s.version, 'valid', ${events.column('schemaValid')})
          FROM action_schemas s WHERE s.id = ${events.column('schemaId')}) END`,
    asSchemaRef,
  ],
});

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
  SCHEMA_REF,
);

/** The one domain shape of a stored event (with its chain's name), whatever query read it. */
export type EventRecord = ReturnType<typeof EVENT_RECORD.decode>;
