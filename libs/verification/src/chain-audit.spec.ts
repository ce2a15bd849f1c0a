import { generateKeyPairSync } from 'node:crypto';
import {
  CHECKPOINT_KEY_NAME,
  formatVerifierKey,
  eventLeafHash,
  GENESIS_HASH,
  merkleRoot,
  parseVerifierKey,
  signChainCheckpoint,
} from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { AuditedEvent } from './audited-event';
import { ChainAudit, MAX_REPORTED_ERRORS } from './chain-audit';
import { CHAIN, honestChain } from './chain.fixture';

const { privateKey } = generateKeyPairSync('ed25519');
const verifier = parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey));

/** The Merkle root of the first `size` events (docs/contract.md §10), computed independently of the audit. */
const rootAt = (events: AuditedEvent[], size: number): string =>
  merkleRoot(events.slice(0, size).map((e) => eventLeafHash(e.hash))).toString('hex');

const checkpointAt = (events: AuditedEvent[], size: number) => {
  const hash = rootAt(events, size);
  return { size, hash, note: signChainCheckpoint({ chainId: CHAIN.id, size, hash }, privateKey) };
};

/** Feeds the events with their stored hash as the recomputed one, unless `altered` says otherwise. */
function audit(events: AuditedEvent[], altered: Map<number, string> = new Map()): ChainAudit {
  const sut = new ChainAudit(CHAIN, [verifier]);
  for (const e of events) sut.addEvent(e, altered.get(e.position) ?? e.hash);
  return sut;
}

const NOW = new Date('2026-11-22T08:00:00.000Z');

describe('ChainAudit', () => {
  it('passes an honest chain with a checkpoint and a matching head', () => {
    const events = honestChain(5);
    const sut = audit(events);
    sut.addCheckpoint(checkpointAt(events, 3), events[2]!, rootAt(events, 3));
    sut.checkHead({ position: 5, hash: events[4]!.hash });
    sut.checkpointsAboveHead(0, 0, 5);
    sut.eventsBeyondHead(0, 0, 5);
    expect(sut.result(NOW)).toEqual({
      valid: true,
      chainId: CHAIN.id,
      checkedEvents: 5,
      lastPosition: 5,
      lastHash: events[4]!.hash,
      firstInvalidPosition: null,
      checkpointsChecked: 1,
      errors: [],
      errorCount: 0,
      errorsTruncated: false,
      verifiedAt: '2026-11-22T08:00:00.000Z',
    });
  });

  it('passes an empty chain', () => {
    const sut = new ChainAudit(CHAIN, [verifier]);
    sut.checkHead({ position: 0, hash: GENESIS_HASH });
    expect(sut.result(NOW)).toMatchObject({ valid: true, checkedEvents: 0, lastPosition: 0, lastHash: GENESIS_HASH });
  });

  it('reports an altered event where its recomputed hash differs, and nothing else', () => {
    const events = honestChain(4);
    const result = audit(events, new Map([[2, 'f'.repeat(64)]])).result(NOW);
    expect(result).toMatchObject({ valid: false, firstInvalidPosition: 2, errorCount: 1 });
    expect(result.errors).toEqual([{ position: 2, eventId: events[1]!.id, message: like.stringMatching(/altered/) }]);
  });

  it('reports a broken link at the event after a rehashed one', () => {
    const events = honestChain(4);
    events[1] = { ...events[1]!, hash: 'a'.repeat(64) };
    const result = audit(events).result(NOW);
    expect(result.errors).toEqual([
      {
        position: 3,
        eventId: events[2]!.id,
        message: like.stringMatching(/previousHash [0-9a-f]{64} does not match the hash of the event at position 2/),
      },
    ]);
  });

  it('requires 64 zeros before the first event', () => {
    const events = honestChain(1);
    events[0] = { ...events[0]!, previousHash: 'b'.repeat(64) };
    expect(audit(events).result(NOW).errors).toEqual([
      { position: 1, eventId: events[0].id, message: like.stringMatching(/64 zeros/) },
    ]);
  });

  it('reports a gap once, at its first missing position', () => {
    const events = honestChain(8);
    const result = audit([...events.slice(0, 2), ...events.slice(5)]).result(NOW);
    expect(result).toMatchObject({ firstInvalidPosition: 3, checkedEvents: 5, errorCount: 1 });
    expect(result.errors[0]).toEqual({
      position: 3,
      eventId: null,
      message: like.stringMatching(/positions 3–5 are missing/),
    });
  });

  it('reports a repeated position and an event of another account', () => {
    const events = honestChain(2);
    const result = audit([events[0]!, events[1]!, { ...events[1]!, ownAccount: false }]).result(NOW);
    expect(result.errors.map((e) => e.message)).toEqual([
      'position 2 occurs more than once',
      'the event belongs to another account than its chain',
      like.stringMatching(/previousHash [0-9a-f]{64} does not match/),
    ]);
  });

  it('reports a timestamp earlier than the one before it, naming it, and only there', () => {
    const events = honestChain(4);
    const back = { ...events[2]!, timestamp: '2020-01-01T00:00:00.000Z' };
    events[2] = { ...back, hash: back.hash };
    const result = audit(events).result(NOW);
    expect(result).toMatchObject({ valid: false, firstInvalidPosition: 3, errorCount: 1 });
    expect(result.errors).toEqual([
      {
        position: 3,
        eventId: events[2].id,
        message: `timestamp 2020-01-01T00:00:00.000Z is earlier than ${events[1]!.timestamp}, the timestamp of the event at position 2: timestamps never decrease along a chain`,
      },
    ]);
  });

  describe('checkpoints', () => {
    const events = honestChain(6);

    it('reports a chain rewritten after a checkpoint', () => {
      const sut = audit(events);
      const signed = {
        size: 4,
        hash: 'c'.repeat(64),
        note: signChainCheckpoint({ chainId: CHAIN.id, size: 4, hash: 'c'.repeat(64) }, privateKey),
      };
      sut.addCheckpoint(signed, events[3]!, rootAt(events, 4));
      expect(sut.result(NOW).errors).toEqual([
        { position: 4, eventId: events[3]!.id, message: like.stringMatching(/rewritten after it was signed/) },
      ]);
    });

    it('passes a checkpoint of size 0 that signs the empty tree, and reports one that does not', () => {
      const sut = audit(events);
      sut.addCheckpoint(checkpointAt(events, 0), null, rootAt(events, 0));
      expect(sut.result(NOW)).toMatchObject({ valid: true, checkpointsChecked: 1 });
      const head = { size: 0, hash: GENESIS_HASH };
      sut.addCheckpoint(
        { ...head, note: signChainCheckpoint({ chainId: CHAIN.id, ...head }, privateKey) },
        null,
        rootAt(events, 0),
      );
      expect(sut.result(NOW).errors).toEqual([
        { position: 0, eventId: null, message: like.stringMatching(/rewritten after it was signed/) },
      ]);
    });

    it('reports a checkpoint whose Merkle root cannot be recomputed', () => {
      const sut = audit(events);
      sut.addCheckpoint(checkpointAt(events, 4), events[3]!, null);
      expect(sut.result(NOW).errors).toEqual([
        { position: 4, eventId: events[3]!.id, message: like.stringMatching(/cannot be recomputed/) },
      ]);
    });

    it('reports a checkpoint whose event is missing', () => {
      const sut = audit(events);
      sut.addCheckpoint(checkpointAt(events, 4), null, null);
      expect(sut.result(NOW).errors).toEqual([
        { position: 4, eventId: null, message: like.stringMatching(/event at position 4 is missing/) },
      ]);
    });

    it('reports a stored note not signed by the service key, and a row that disagrees with its note', () => {
      const stranger = generateKeyPairSync('ed25519').privateKey;
      const sut = audit(events);
      sut.addCheckpoint(
        {
          ...checkpointAt(events, 2),
          note: signChainCheckpoint({ chainId: CHAIN.id, size: 2, hash: rootAt(events, 2) }, stranger),
        },
        events[1]!,
        rootAt(events, 2),
      );
      sut.addCheckpoint({ ...checkpointAt(events, 3), hash: rootAt(events, 4) }, events[2]!, rootAt(events, 3));
      sut.addCheckpoint(
        { ...checkpointAt(events, 5), note: checkpointAt(events, 5).note.replace(`\n5\n`, '\n6\n') },
        events[4]!,
        rootAt(events, 5),
      );
      const messages = sut.result(NOW).errors.map((e) => e.message);
      expect(messages).toEqual([
        like.stringMatching(/size 2 is not signed by this service's checkpoint key/),
        like.stringMatching(/row of size 3 does not match its signed note/),
        like.stringMatching(
          /size 5 is not signed by this service's checkpoint key nor a retired one \(the signature .* does not verify\)/,
        ),
      ]);
    });

    it('accepts a note signed by a retired key it was given, and only then', () => {
      const retired = generateKeyPairSync('ed25519').privateKey;
      const retiredVerifier = parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, retired));
      const checkpoint = {
        ...checkpointAt(events, 2),
        note: signChainCheckpoint({ chainId: CHAIN.id, size: 2, hash: rootAt(events, 2) }, retired),
      };
      const withRetired = new ChainAudit(CHAIN, [verifier, retiredVerifier]);
      events.forEach((e) => withRetired.addEvent(e, e.hash));
      withRetired.addCheckpoint(checkpoint, events[1]!, rootAt(events, 2));
      expect(withRetired.result(NOW)).toMatchObject({ valid: true, checkpointsChecked: 1, errors: [] });
      const without = audit(events);
      without.addCheckpoint(checkpoint, events[1]!, rootAt(events, 2));
      expect(without.result(NOW).errors).toEqual([
        like.objectContaining({ position: 2, message: like.stringMatching(/missing from RETIRED_VERIFIER_KEYS/) }),
      ]);
    });

    it('reports a checkpoint of another chain', () => {
      const other = signChainCheckpoint(
        { chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y', size: 2, hash: rootAt(events, 2) },
        privateKey,
      );
      const sut = audit(events);
      sut.addCheckpoint({ size: 2, hash: rootAt(events, 2), note: other }, events[1]!, rootAt(events, 2));
      expect(sut.result(NOW).errors[0]!.message).toMatch(/does not match its signed note/);
    });

    it('reports checkpoints above the head as removed events', () => {
      const sut = audit(events.slice(0, 4));
      sut.checkHead({ position: 4, hash: events[3]!.hash });
      sut.checkpointsAboveHead(2, 5, 4);
      expect(sut.result(NOW)).toMatchObject({
        firstInvalidPosition: 5,
        checkpointsChecked: 2,
        errors: [{ position: 5, eventId: null, message: like.stringMatching(/removed/) }],
      });
    });
  });

  describe('the head', () => {
    const events = honestChain(3);

    it('reports missing newest events', () => {
      const sut = audit(events.slice(0, 2));
      sut.checkHead({ position: 3, hash: events[2]!.hash });
      expect(sut.result(NOW).errors).toEqual([
        { position: 3, eventId: null, message: like.stringMatching(/no event was found after position 2/) },
      ]);
    });

    it('reports a head hash that is not the last event', () => {
      const sut = audit(events);
      sut.checkHead({ position: 3, hash: 'd'.repeat(64) });
      expect(sut.result(NOW).errors).toEqual([
        { position: 3, eventId: events[2]!.id, message: like.stringMatching(/head hash/) },
      ]);
    });

    it('reports events beyond the head', () => {
      const sut = audit(events);
      sut.eventsBeyondHead(2, 7, 3);
      expect(sut.result(NOW).errors).toEqual([
        { position: 7, eventId: null, message: '2 event(s) lie beyond the chain head at position 3' },
      ]);
    });
  });

  it(`lists at most ${MAX_REPORTED_ERRORS} errors but counts them all and keeps the first invalid position`, () => {
    const events = honestChain(150);
    const result = audit(events, new Map(events.map((e) => [e.position, '0'.repeat(64)]))).result(NOW);
    expect(result.errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(result).toMatchObject({
      valid: false,
      errorCount: 150,
      errorsTruncated: true,
      firstInvalidPosition: 1,
      checkedEvents: 150,
    });
  });
});
