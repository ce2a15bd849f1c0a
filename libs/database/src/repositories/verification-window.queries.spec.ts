import { ulidToUuid } from '@app/common/ids';
import { CheckpointEntity } from '../entities/checkpoint.entity';
import { ErasureEventEntity } from '../entities/erasure-event.entity';
import { EventEntity } from '../entities/event.entity';
import { MerkleNodeEntity } from '../entities/merkle-node.entity';
import { Property, Table } from '../schema/table';
import {
  SqlQuery,
  WINDOW_COLUMNS,
  verificationWindowCheckpointsQuery,
  verificationWindowEventsQuery,
  verificationWindowNodesQuery,
  verificationWindowReads,
} from './verification-window.queries';

/** The window SQL that VerificationWindowReader and the worker threads share. */
describe('whole-chain verification window queries', () => {
  const chainId = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
  const accountId = 'acc_01JDQ8Z5V0000000000000000A';

  it('read the events of (after, upTo], at most one more than the window holds, and the checkpoints of that range', () => {
    const window = { chainId, accountId, after: 2, upTo: 6 };
    // Ids bound as stored (uuid), the chain's also as the API writes it: it is hashed.
    expect(verificationWindowCheckpointsQuery(window).values).toEqual([ulidToUuid(chainId), 2, 6]);
    expect(verificationWindowEventsQuery(window).values).toEqual([
      ulidToUuid(chainId),
      2,
      6,
      5,
      ulidToUuid(accountId),
      chainId,
    ]);
    expect(verificationWindowEventsQuery(window).text).toMatch(/ORDER BY events\.position\s+LIMIT \$4$/);
  });

  it('take checkpoints of size 0 in the first window', () => {
    expect(verificationWindowCheckpointsQuery({ chainId, accountId, after: 0, upTo: 0 }).values).toEqual([
      ulidToUuid(chainId),
      -1,
      0,
    ]);
  });

  it('run each read through the one stream given, its own query, handing on every row (an event its id as the API writes it)', async () => {
    const window = { chainId, accountId, after: 4, upTo: 9 };
    const ran: SqlQuery[] = [];
    const reads = verificationWindowReads(<Row>(query: SqlQuery, onRow: (row: Row) => void) => {
      ran.push(query);
      [1, 2].forEach((n) => onRow({ n, id: ulidToUuid(`evt_01JDQ8Z5WZ2M7K4N9P3R6T0V1${n}`) } as Row));
      return Promise.resolve();
    });
    const got: unknown[] = [];
    await reads.checkpoints(window, (row) => got.push(row));
    await reads.events(window, (row) => got.push(row));
    await reads.nodes(window, (row) => got.push(row));
    expect(ran).toEqual([
      verificationWindowCheckpointsQuery(window),
      verificationWindowEventsQuery(window),
      verificationWindowNodesQuery(window),
    ]);
    expect(got).toHaveLength(6);
    expect(got.slice(2, 4)).toEqual([
      { n: 1, id: 'evt_01JDQ8Z5WZ2M7K4N9P3R6T0V11' },
      { n: 2, id: 'evt_01JDQ8Z5WZ2M7K4N9P3R6T0V12' },
    ]);
  });

  it('name the columns the entities map their properties to (the file cannot load the metadata: workers load it)', () => {
    const same = <E>(table: Table<E>, columns: Partial<Record<Property<E>, string>>) => {
      for (const [property, column] of Object.entries(columns) as [Property<E>, string][])
        expect([property, column.replace(/"/g, '')]).toEqual([property, table.bare(property).replace(/"/g, '')]);
    };
    same(new Table(EventEntity, 'e'), WINDOW_COLUMNS.events);
    same(new Table(CheckpointEntity, 'k'), WINDOW_COLUMNS.checkpoints);
    same(new Table(MerkleNodeEntity, 'm'), WINDOW_COLUMNS.merkleNodes);
    same(new Table(ErasureEventEntity, 'r'), WINDOW_COLUMNS.erasureEvents);
  });
});
