import { generateKeyPairSync } from 'node:crypto';
import { CHECKPOINT_KEY_NAME, computeEventHash, formatVerifierKey, GENESIS_HASH, parseVerifierKey } from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { ChainAudit } from './chain-audit';
import { inspectWindow, StoredEvent } from './chain-window';
import { CHAIN, honestChain, memoryRows } from './chain.fixture';
import { seededRandom as prng } from '../../../test/support/seeded-random';

const verifier = parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, generateKeyPairSync('ed25519').privateKey));
const NOW = new Date('2026-11-22T08:00:00.000Z');

/** One of the attacks whole-chain verification must catch, applied to a copy of the rows. */
function tamper(events: StoredEvent[], random: () => number): StoredEvent[] {
  const rows = events.map((e) => ({ ...e }));
  const at = Math.floor(random() * rows.length);
  switch (Math.floor(random() * 8)) {
    case 0:
      rows[at]!.actor = 'mallory';
      break;
    case 1:
      rows.splice(at, 1);
      break;
    case 2:
      rows[at]!.position += 1 + Math.floor(random() * 3);
      rows.sort((a, b) => a.position - b.position);
      break;
    case 3:
      rows[at]!.ownAccount = false;
      break;
    case 4:
      rows.splice(at, 0, { ...rows[at]! });
      break;
    case 5:
      rows[at]!.previousHash = GENESIS_HASH;
      break;
    case 6:
      // Back in time, re-hashed: only the time order tells (at position 1 nothing does).
      rows[at]!.timestamp = '2020-01-01T00:00:00.000Z';
      rows[at]!.hash = computeEventHash(rows[at]!);
      break;
    default:
      // Deleted, and every later hash recomputed: only the positions still tell.
      rows.splice(at, 1);
      for (let i = at; i < rows.length; i++) {
        rows[i]!.previousHash = i === 0 ? GENESIS_HASH : rows[i - 1]!.hash;
        rows[i]!.hash = computeEventHash(rows[i]!);
      }
  }
  return rows;
}

/** The audit's answer when fed event by event, and when fed windows of `size` positions. */
function byEvents(rows: StoredEvent[]) {
  const audit = new ChainAudit(CHAIN, [verifier]);
  for (const e of rows) audit.addEvent(e, computeEventHash(e));
  return audit.result(NOW);
}
async function byWindows(rows: StoredEvent[], size: number, head: number) {
  const audit = new ChainAudit(CHAIN, [verifier]);
  const window = { chainId: CHAIN.id, accountId: CHAIN.accountId };
  for (let after = 0; after < Math.max(1, head); after += size)
    audit.addWindow(await inspectWindow(memoryRows(rows), { ...window, after, upTo: Math.min(head, after + size) }));
  return audit.result(NOW);
}

describe('inspectWindow: the events of a window', () => {
  /** What a window over these rows (positions 1…100) reports of its events. */
  const eventsOf = async (rows: readonly StoredEvent[]) =>
    (await inspectWindow(memoryRows(rows), { chainId: CHAIN.id, accountId: CHAIN.accountId, after: 0, upTo: 100 }))
      .events;
  const audited = (e: StoredEvent) => ({
    id: e.id,
    ownAccount: e.ownAccount,
    position: e.position,
    hash: e.hash,
    previousHash: e.previousHash,
    timestamp: e.timestamp,
  });

  it('sends an intact window as one run: its two ends', async () => {
    const events = honestChain(4);
    expect(await eventsOf(events)).toEqual({
      run: {
        count: 4,
        first: {
          id: events[0]!.id,
          ownAccount: true,
          position: 1,
          hash: events[0]!.hash,
          previousHash: GENESIS_HASH,
          timestamp: events[0]!.timestamp,
        },
        last: {
          id: events[3]!.id,
          ownAccount: true,
          position: 4,
          hash: events[3]!.hash,
          previousHash: events[2]!.hash,
          timestamp: events[3]!.timestamp,
        },
      },
      events: [],
    });
  });

  it.each([
    ['an altered event', 2, (rows: StoredEvent[]) => (rows[2]!.action = 'doc.delete')],
    ['a broken link', 2, (rows: StoredEvent[]) => (rows[2]!.previousHash = rows[0]!.hash)],
    ['a gap', 1, (rows: StoredEvent[]) => rows.splice(1, 1)],
    ["another account's event", 3, (rows: StoredEvent[]) => (rows[3]!.ownAccount = false)],
    ['a timestamp going back', 2, (rows: StoredEvent[]) => (rows[2]!.timestamp = rows[0]!.timestamp)],
    ['an altered first event', 0, (rows: StoredEvent[]) => (rows[0]!.actor = 'mallory')],
  ])(
    'sends the events before %s as a run, and every event from it with its recomputed hash',
    async (_, from, attack) => {
      const rows = honestChain(5).map((e) => ({ ...e }));
      attack(rows);
      const sut = await eventsOf(rows);
      expect(sut.run).toEqual(
        from === 0 ? null : { count: from, first: audited(rows[0]!), last: audited(rows[from - 1]!) },
      );
      expect(sut.events).toEqual(rows.slice(from).map((e) => ({ ...audited(e), computedHash: computeEventHash(e) })));
    },
  );

  it('sends an empty window as nothing', async () => {
    expect(await eventsOf([])).toEqual({ run: null, events: [] });
  });
});

describe('ChainAudit fed by windows', () => {
  it('answers exactly as when fed event by event, for honest and tampered chains and any window size', async () => {
    const random = prng(20261122);
    for (let round = 0; round < 300; round++) {
      const head = 1 + Math.floor(random() * 30);
      const honest = honestChain(head);
      const rows = round % 5 === 0 ? honest : tamper(honest, random);
      const size = 1 + Math.floor(random() * 8);
      // Events moved beyond the head are no window's: the service finds them by the head's facts.
      expect(await byWindows(rows, size, head)).toEqual(byEvents(rows.filter((e) => e.position <= head)));
    }
  });
});

describe('inspectWindow', () => {
  it('reads the checkpoints of the window, then its events, each checkpoint with the event at its size', async () => {
    const events = honestChain(6);
    const window = { chainId: CHAIN.id, accountId: CHAIN.accountId, after: 2, upTo: 6 };
    const reads: string[] = [];
    const report = await inspectWindow(
      {
        checkpoints: (request, onRow) => {
          reads.push('checkpoints');
          expect(request).toEqual(window);
          onRow({ size: '4', hash: events[3]!.hash, note: 'note' });
          return Promise.resolve();
        },
        events: (request, onRow) => {
          reads.push('events');
          expect(request).toEqual(window);
          events.slice(2, 6).forEach(onRow);
          return Promise.resolve();
        },
        nodes: (request) => {
          reads.push('nodes');
          expect(request).toEqual(window);
          return Promise.resolve();
        },
      },
      window,
    );
    expect(reads).toEqual(['checkpoints', 'nodes', 'events']);
    expect(report.events).toMatchObject({ run: { count: 4 }, events: [] });
    expect(report.checkpoints).toEqual([
      {
        checkpoint: { size: 4, hash: events[3]!.hash, note: 'note' },
        event: { id: events[3]!.id, hash: events[3]!.hash },
        prefix: [{ level: 1, index: 1, hash: like.stringMatching(/^[0-9a-f]{64}$/) }],
      },
    ]);
  });
});
