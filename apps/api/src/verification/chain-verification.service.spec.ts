import { generateKeyPairSync } from 'node:crypto';
import { AppConfig, AppError, Metrics } from '@app/common';
import {
  ChainRecord,
  ChainsRepository,
  CheckpointsRepository,
  MerkleNodesRepository,
  ReadReplica,
  RetentionLogRepository,
} from '@app/database';
import { CHECKPOINT_KEY_NAME, formatVerifierKey, parseVerifierKey } from '@app/hashing';
import { inspectWindow, WindowReport, WindowRequest } from '@app/verification';
import { CHAIN, honestChain, memoryRows } from '@app/verification/chain.fixture';
import { CheckpointSigner } from '../checkpoints/checkpoint-signer';
import { ChainVerificationService } from './chain-verification.service';
import { WindowInspector } from './window-inspector';

const verifier = parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, generateKeyPairSync('ed25519').privateKey));
const EVENTS = honestChain(10);

/** The service over an in-memory chain of 10 events, windows of 2, whose reads finish when `release` is called. */
function setup(verifyConcurrency = 2) {
  const requests: WindowRequest[] = [];
  const pending: (() => void)[] = [];
  const inspector = {
    windowsInFlight: 2,
    inspect: (request: WindowRequest) =>
      new Promise<WindowReport>((resolve) => {
        requests.push(request);
        pending.push(() => void inspectWindow(memoryRows(EVENTS), request).then(resolve));
      }),
  } as unknown as WindowInspector;
  const head = EVENTS[EVENTS.length - 1]!;
  const chain = {
    id: CHAIN.id,
    accountId: CHAIN.accountId,
    lastPosition: head.position,
    lastHash: head.hash,
    firstPosition: 1,
    prunedHash: null,
    prunedTimestamp: null,
  } as ChainRecord;
  const chains = {
    findOwned: (accountId: string) => Promise.resolve({ ...chain, accountId }),
    headFacts: () =>
      Promise.resolve({
        position: head.position,
        checkpointsAbove: 0,
        smallestAbove: 0,
        eventsBeyond: 0,
        firstBeyond: 0,
        nodesBeyond: 0,
      }),
  } as unknown as ChainsRepository;
  const signer = { verifiers: [verifier] } as unknown as CheckpointSigner;
  const config = Object.assign(new AppConfig(), { verifyPageSize: 2, verifyConcurrency });
  const nodes = { nodes: () => Promise.resolve([]) } as unknown as MerkleNodesRepository;
  const retentionLog = { prunes: () => Promise.resolve([]) } as unknown as RetentionLogRepository;
  const checkpoints = { findSizes: () => Promise.resolve([]) } as unknown as CheckpointsRepository;
  const sut = new ChainVerificationService(
    chains,
    nodes,
    signer,
    inspector,
    config,
    new Metrics(),
    retentionLog,
    checkpoints,
    { floor: () => Promise.resolve(null) } as unknown as ReadReplica,
  );
  /** Lets every read started so far finish, then the walk go on. */
  const release = async () => {
    while (pending.length > 0) pending.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const finish = async <T>(verification: Promise<T>): Promise<T> => {
    let done = false;
    void verification.finally(() => (done = true)).catch(() => undefined);
    while (!done) await release();
    return verification;
  };
  return { sut, requests, release, finish };
}

describe('ChainVerificationService', () => {
  it('walks every window, a few at a time, and answers valid', async () => {
    const { sut, requests, release, finish } = setup();
    const verification = sut.verify(CHAIN.accountId, CHAIN.id);
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests).toHaveLength(2);
    await release();
    expect(requests.length).toBeGreaterThan(2);
    expect((await finish(verification)).data).toMatchObject({ valid: true, checkedEvents: 10, lastPosition: 10 });
    expect(requests.map((r) => [r.after, r.upTo])).toEqual([
      [0, 2],
      [2, 4],
      [4, 6],
      [6, 8],
      [8, 10],
    ]);
  });

  it('runs at most VERIFY_CONCURRENCY verifications of one account at once: the next gets 429 RATE_LIMITED with Retry-After', async () => {
    const { sut, finish } = setup(2);
    const first = sut.verify('acc_a', CHAIN.id);
    const second = sut.verify('acc_a', CHAIN.id);
    const refused = await sut.verify('acc_a', CHAIN.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', headers: { 'Retry-After': '1' }, details: { limit: 2 } });
    const otherAccount = sut.verify('acc_b', CHAIN.id);
    await finish(Promise.all([first, second, otherAccount]));
    expect((await finish(sut.verify('acc_a', CHAIN.id))).data.valid).toBe(true);
  });

  it('frees its place when it fails', async () => {
    const { sut, finish } = setup(1);
    const gone = new AbortController();
    gone.abort();
    await expect(finish(sut.verify('acc_a', CHAIN.id, gone.signal))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
    expect((await finish(sut.verify('acc_a', CHAIN.id))).data.valid).toBe(true);
  });

  it('starts no further window once the client is gone', async () => {
    const { sut, requests, release } = setup();
    const gone = new AbortController();
    const verification = sut.verify(CHAIN.accountId, CHAIN.id, gone.signal);
    void verification.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests).toHaveLength(2);
    gone.abort();
    await release();
    await expect(verification).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(requests).toHaveLength(2);
  });
});
