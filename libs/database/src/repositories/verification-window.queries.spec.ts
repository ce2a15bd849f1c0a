import { verificationWindowCheckpointsQuery, verificationWindowEventsQuery } from './verification-window.queries';

/** The window SQL that EventsRepository/CheckpointsRepository and the worker threads share. */
describe('whole-chain verification window queries', () => {
  const chainId = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
  const accountId = 'acc_01JDQ8Z5V0000000000000000A';

  it('read the events of (after, upTo], at most one more than the window holds, and the checkpoints of that range', () => {
    const window = { chainId, accountId, after: 2, upTo: 6 };
    expect(verificationWindowCheckpointsQuery(window).values).toEqual([chainId, 2, 6]);
    expect(verificationWindowEventsQuery(window).values).toEqual([chainId, 2, 6, 5, accountId]);
    expect(verificationWindowEventsQuery(window).text).toMatch(/ORDER BY events\.position\s+LIMIT \$4$/);
  });

  it('take checkpoints of size 0 in the first window', () => {
    expect(verificationWindowCheckpointsQuery({ chainId, accountId, after: 0, upTo: 0 }).values).toEqual([
      chainId,
      -1,
      0,
    ]);
  });
});
