import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { AddressInfo } from 'node:net';
import { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatCheckpoint, parseNote, signNote, verifyCosignature } from '@app/hashing';
import { StateStore } from './state-store';
import { TestLog } from './test-log.fixture';
import { Witness } from './witness';
import { createWitnessServer, MAX_BODY_BYTES } from './witness-server';

const NAME = 'witness.test/w1';
const NOW = 1_765_000_000;

describe('the witness over HTTP (c2sp.org/tlog-witness add-checkpoint)', () => {
  let dir: string;
  let stateFile: string;
  let witnessKey: KeyObject;
  let log: TestLog;
  let other: TestLog;
  let server: Server;
  let sut: Witness;
  let url: string;
  const warnings: string[] = [];

  async function start(): Promise<void> {
    sut = new Witness({
      name: NAME,
      privateKey: witnessKey,
      logs: new Map([log, other].map((l) => [l.origin, l.witnessed])),
      state: await StateStore.open(stateFile),
      now: () => NOW,
      warn: (message) => warnings.push(message),
    });
    server = createWitnessServer(sut, { error: () => undefined });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/add-checkpoint`;
  }

  async function stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async function post(body: string): Promise<{ status: number; type: string | null; text: string }> {
    const res = await fetch(url, { method: 'POST', body });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }

  const cosigned = (origin: string): Promise<unknown> =>
    readFile(stateFile, 'utf8').then((text) => (JSON.parse(text) as { logs: Record<string, unknown> }).logs[origin]);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'witness-'));
    stateFile = join(dir, 'state', 'state.json');
    witnessKey = generateKeyPairSync('ed25519').privateKey;
    log = new TestLog();
    other = new TestLog('example.com/other-log');
    warnings.length = 0;
    await start();
  });

  afterEach(async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('cosigns a first checkpoint, and the cosignature verifies with its verifier key', async () => {
    const note = log.checkpoint(5);
    const res = await post(await log.request(0, 5, note));
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^— witness\.test\/w1 [A-Za-z0-9+/=]+\n$/);
    expect(verifyCosignature(parseNote(note).text, res.text, sut.verifierKey)).toEqual({
      ok: true,
      name: NAME,
      time: NOW,
    });
    expect(await cosigned(log.origin)).toMatchObject({ size: 5, hash: log.root(5).toString('base64') });
  });

  it('cosigns a checkpoint that extends the last one with a valid consistency proof', async () => {
    expect((await post(await log.request(0, 5))).status).toBe(200);
    const res = await post(await log.request(5, 13));
    expect(res.status).toBe(200);
    expect(verifyCosignature(parseNote(log.checkpoint(13)).text, res.text, sut.verifierKey).ok).toBe(true);
    expect(await cosigned(log.origin)).toMatchObject({ size: 13 });
  });

  it('answers a wrong old size with 409 and its size as text/x.tlog.size; the resubmission is cosigned', async () => {
    expect((await post(await log.request(0, 5))).status).toBe(200);
    const conflict = await post(await log.request(0, 8));
    expect(conflict).toEqual({ status: 409, type: 'text/x.tlog.size', text: '5\n' });
    const retry = await post(await log.request(Number(conflict.text), 8));
    expect(retry.status).toBe(200);
    expect(await cosigned(log.origin)).toMatchObject({ size: 8 });
  });

  it('cosigns the same checkpoint again (old = size, same root) without changing the record', async () => {
    expect((await post(await log.request(0, 5))).status).toBe(200);
    const before = await readFile(stateFile, 'utf8');
    expect((await post(await log.request(5, 5))).status).toBe(200);
    expect(await readFile(stateFile, 'utf8')).toBe(before);
  });

  describe('a forked log (same origin and key, another tree)', () => {
    beforeEach(async () => {
      expect((await post(await log.request(0, 5))).status).toBe(200);
    });

    it('is refused with 422 when it grows: no consistency proof from the cosigned root exists', async () => {
      const before = await readFile(stateFile, 'utf8');
      const fork = log.fork('rewritten');
      const res = await post(await fork.request(5, 9));
      expect(res.status).toBe(422);
      expect(res.text).toBe('the consistency proof from 5 to 9 does not verify\n');
      expect(await readFile(stateFile, 'utf8')).toBe(before);
      expect(warnings.join('\n')).toContain('no valid consistency proof from 5 to 9');
    });

    it('is refused with 409 (text/plain) at the same size with another root', async () => {
      const before = await readFile(stateFile, 'utf8');
      const res = await post(await log.fork('rewritten').request(5, 5));
      expect(res.status).toBe(409);
      expect(res.type).toBe('text/plain; charset=utf-8');
      expect(await readFile(stateFile, 'utf8')).toBe(before);
    });

    it('still cosigns the true log afterwards', async () => {
      expect((await post(await log.fork('rewritten').request(5, 9))).status).toBe(422);
      expect((await post(await log.request(5, 9))).status).toBe(200);
    });
  });

  it('refuses a smaller tree: 400 for old > size, 409 for an old size that is not its own', async () => {
    expect((await post(await log.request(0, 5))).status).toBe(200);
    expect(await post(`old 5\n\n${log.checkpoint(3)}`)).toMatchObject({ status: 400 });
    expect(await post(await log.request(2, 3))).toMatchObject({ status: 409, text: '5\n' });
    expect(await cosigned(log.origin)).toMatchObject({ size: 5 });
  });

  it('keeps its record across a restart', async () => {
    expect((await post(await log.request(0, 5))).status).toBe(200);
    await stop();
    await start();
    expect(await post(await log.request(0, 8))).toMatchObject({ status: 409, text: '5\n' });
    expect((await post(await log.request(5, 8))).status).toBe(200);
    expect(await readdir(join(dir, 'state'))).toEqual(['state.json']);
  });

  describe("the log's signature", () => {
    it('refuses with 403 a checkpoint signed by another key under the same name', async () => {
      const forger = generateKeyPairSync('ed25519').privateKey;
      const res = await post(await log.request(0, 5, log.checkpoint(5, forger)));
      expect(res.status).toBe(403);
      await expect(readFile(stateFile)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('refuses with 403 a signature of the known key that does not verify, and reports it', async () => {
      const note = log.checkpoint(5);
      const tampered = note.replace('\n5\n', '\n6\n');
      const res = await post(await log.request(0, 6, tampered));
      expect(res.status).toBe(403);
      expect(warnings.join('\n')).toContain('a bad signature from a known key');
    });

    it('answers 404 for an origin it does not witness', async () => {
      const unknown = new TestLog('example.com/unknown');
      expect((await post(await unknown.request(0, 3))).status).toBe(404);
    });
  });

  it('serialises concurrent submissions: one of several racing from the same size wins, the rest get 409', async () => {
    const sizes = [3, 4, 5, 6, 7, 8];
    const answers = await Promise.all(sizes.map(async (size) => post(await log.request(0, size))));
    const winners = answers.flatMap((a, i) => (a.status === 200 ? [sizes[i]!] : []));
    expect(winners).toHaveLength(1);
    const losers = answers.filter((a) => a.status !== 200);
    expect(losers.every((a) => a.status === 409 && a.text === `${winners[0]}\n`)).toBe(true);
    expect(await cosigned(log.origin)).toMatchObject({ size: winners[0] });
  });

  it('records concurrent submissions of different logs both', async () => {
    const answers = await Promise.all([
      log.request(0, 5).then(post),
      other.request(0, 7).then(post),
      log.request(0, 5).then(post),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 409]);
    await stop();
    await start();
    expect(await post(await log.request(0, 6))).toMatchObject({ status: 409, text: '5\n' });
    expect(await post(await other.request(0, 8))).toMatchObject({ status: 409, text: '7\n' });
  });

  describe('malformed requests', () => {
    it.each([
      ['no empty line', 'old 0\n'],
      ['no old line', '\nexample\n'],
      ['a leading zero', 'old 05\n\n'],
      ['a proof line that is not a hash', 'old 0\nAAAA\n\n'],
    ])('answers 400 for %s, without a stack trace', async (_what, body) => {
      const res = await post(`${body}${log.checkpoint(5)}`);
      expect(res.status).toBe(400);
      expect(res.text).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
    });

    it('answers 422 for a proof with old = 0 or one that does not verify', async () => {
      const proof = (await log.proof(3, 5)).map((h) => `${h.toString('base64')}\n`).join('');
      expect((await post(`old 0\n${proof}\n${log.checkpoint(5)}`)).status).toBe(422);
      expect((await post(await log.request(0, 3))).status).toBe(200);
      expect((await post(`old 3\n${proof.replace(/^./, 'A')}\n${log.checkpoint(5)}`)).status).toBe(422);
    });

    it('answers 413 for a body over the limit', async () => {
      expect((await post('a'.repeat(MAX_BODY_BYTES + 1))).status).toBe(413);
    });

    it('answers 405 to a GET and 404 elsewhere', async () => {
      expect((await fetch(url)).status).toBe(405);
      expect((await fetch(url.replace('add-checkpoint', 'other'), { method: 'POST' })).status).toBe(404);
    });

    it('answers 400 for a size-0 checkpoint whose root is not the empty tree', async () => {
      const note = signNote(formatCheckpoint({ origin: log.origin, size: 0, hash: log.root(1) }), {
        name: 'audit-trail',
        privateKey: log.key,
      });
      expect((await post(`old 0\n\n${note}`)).status).toBe(400);
    });
  });
});
