import { ulidToUuid } from '@app/common/ids';
import { AccountEntity } from '../entities/account.entity';
import { ChainEntity } from '../entities/chain.entity';
import { EventEntity } from '../entities/event.entity';
import { MerkleNodeEntity } from '../entities/merkle-node.entity';
import { arrayOf, asBuffer, asNumber, asString, computed, joined, orNull, Table } from './table';

describe('Table: SQL written from the entity', () => {
  const accounts = new Table(AccountEntity, 'a');

  it('names each column as its @Column says, qualified by the alias, quoting where SQL must', () => {
    expect(accounts.name).toBe('accounts');
    expect(accounts.column('retentionDays')).toBe('a.retention_days');
    expect(accounts.bare('legalHoldBy')).toBe('legal_hold_by');
    expect(new Table(EventEntity, 'e').column('timestamp')).toBe('e."timestamp"');
  });

  it('selects properties under their own names and decodes them through the column transformer', () => {
    const chains = new Table(ChainEntity, 'c');
    const selection = chains.select('id', 'lastPosition', 'prunedTimestamp');
    expect(selection.sql).toBe(
      'c.id AS "id", c.last_position AS "lastPosition", c.pruned_timestamp AS "prunedTimestamp"',
    );
    // pg gives int8 as text; the entity's bigintAsNumber makes it a number. Nulls stay null.
    // The id as stored (uuid, migration 1765900000000) through the column's transformer.
    const id = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
    expect(selection.decode({ id: ulidToUuid(id), lastPosition: '42', prunedTimestamp: null })).toEqual({
      id,
      lastPosition: 42,
      prunedTimestamp: null,
    });
  });

  it('refuses a property that is not a column, at compile time and at run time', () => {
    // A renamed or misspelled property fails `npm run typecheck` (the directive fails if this line ever compiles).
    // @ts-expect-error: not a property of AccountEntity
    expect(() => accounts.column('retention_days')).toThrow('accounts has no column for the property retention_days');
    // A relation is a property but not a column.
    expect(() => new Table(EventEntity, 'e').column('chain')).toThrow('events has no column for the property chain');
  });

  it('refuses a class that is not an entity', () => {
    class NotAnEntity {
      id!: string;
    }
    expect(() => new Table(NotAnEntity, 'x')).toThrow('NotAnEntity is not an @Entity with a name');
  });

  it('joins columns, renamed columns of another table and computed values into one typed row', () => {
    const events = new Table(EventEntity, 'e');
    const chains = new Table(ChainEntity, 'c');
    const selection = joined(
      events.select('id', 'position'),
      chains.selectAs({ chainName: 'name' }),
      computed({ until: ['pg_current_snapshot()::text', asString], total: ['count(*)', orNull(asNumber)] }),
    );
    expect(selection.sql).toBe(
      'e.id AS "id", e.position AS "position", c.name AS "chainName", pg_current_snapshot()::text AS "until", count(*) AS "total"',
    );
    const id = 'evt_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
    const row = selection.decode({ id: ulidToUuid(id), position: '7', chainName: 'orders', until: '5:5:', total: '3' });
    expect(row).toEqual({ id, position: 7, chainName: 'orders', until: '5:5:', total: 3 });
    // The row's type is the entity's: a number position, a string chain name.
    const typed: { id: string; position: number; chainName: string; until: string; total: number | null } = row;
    expect(typed.total).toBe(3);
    expect(() => computed({ n: ['1', asNumber] }).decode({ n: 'x' })).toThrow('expected a number from the database');
  });

  it('quotes "index" as the schema does, and decodes bytea and arrays', () => {
    const nodes = new Table(MerkleNodeEntity, 'n');
    expect(nodes.column('index')).toBe('n."index"');
    const hash = Buffer.alloc(32, 1);
    const selection = computed({ hashes: ['n.hashes', orNull(asBuffer)], levels: ['n.levels', arrayOf(asNumber)] });
    expect(selection.decode({ hashes: hash, levels: [2, '3'] })).toEqual({ hashes: hash, levels: [2, 3] });
    expect(selection.decode({ hashes: null, levels: [] })).toEqual({ hashes: null, levels: [] });
    expect(() => selection.decode({ hashes: 'ab', levels: [] })).toThrow('expected bytea from the database');
    expect(() => selection.decode({ hashes: null, levels: null })).toThrow('expected an array from the database');
  });
});
