import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Metrics } from '@app/common';
import {
  CHECKPOINT_KEY_NAME,
  ed25519PrivateKeyFromSeed,
  formatVerifierKey,
  leafHash,
  parseCheckpoint,
  parseCosignatureVerifierKey,
  parseVerifierKey,
  verifiedCosignatures,
  verifyInclusion,
  verifyNote,
} from '@app/hashing';
import { run } from '../apps/cli/src/cli';
import type { InclusionProof } from '../apps/console/src/verify/browser-check';
import { parseVerifierKey as consoleVerifierKey } from '../apps/console/src/verify/signed-note';
import { checkWitnessed, parseCosignatureKey } from '../apps/console/src/verify/witnessed';
import { StateStore } from '../apps/witness/src/state-store';
import { Witness } from '../apps/witness/src/witness';
import { createWitnessServer } from '../apps/witness/src/witness-server';
import { WitnessingReadsService } from '../apps/api/src/witnessing/witnessing-reads.service';
import { WitnessingService } from '../apps/api/src/witnessing/witnessing.service';
import { attemptSql } from './support/raw-sql';
import { bearer, exportJsonText, KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * docs/contract.md §18 end to end: the service's checkpoint log submitted to three real witnesses
 * (apps/witness, in process, each with its own key and state file), and a second service on a
 * fresh database with the same signing key and origin presenting another log (the rewrite drill).
 * Rounds run every second on their own; the tests also run them now (WitnessingService.round) and
 * wait for what they expect.
 */
const ORIGIN = 'audit-trail/checkpoint-log';

interface RunningWitness {
  name: string;
  vkey: string;
  url: string;
  stateFile: string;
  port: number;
  server: Server | null;
  privateKey: ReturnType<typeof generateKeyPairSync>['privateKey'];
}

describe('witnesses (docs/contract.md §18)', () => {
  const seed = randomBytes(32);
  const logVkey = formatVerifierKey(CHECKPOINT_KEY_NAME, ed25519PrivateKeyFromSeed(seed));
  let dir: string;
  let witnesses: RunningWitness[];
  let t: TestApp;

  async function listen(w: RunningWitness): Promise<void> {
    const witness = new Witness({
      name: w.name,
      privateKey: w.privateKey,
      logs: new Map([[ORIGIN, { origin: ORIGIN, verifiers: [parseVerifierKey(logVkey)] }]]),
      state: await StateStore.open(w.stateFile),
    });
    const server = createWitnessServer(witness, { error: () => undefined });
    await new Promise<void>((resolve) => server.listen(w.port, '127.0.0.1', resolve));
    w.port = (server.address() as AddressInfo).port;
    w.url = `http://127.0.0.1:${w.port}`;
    w.server = server;
  }

  async function stop(w: RunningWitness): Promise<void> {
    const server = w.server;
    w.server = null;
    if (server)
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
  }

  const config = () => ({
    signingKey: seed.toString('base64'),
    witnessIntervalSeconds: 1,
    witnessTimeoutSeconds: 2,
    witnesses: witnesses.map((w) => ({ key: w.vkey, url: w.url })),
    witnessQuorum: witnesses.length,
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'witnessing-e2e-'));
    witnesses = [1, 2, 3].map((n) => {
      const privateKey = generateKeyPairSync('ed25519').privateKey;
      const name = `witness.test/w${n}`;
      return {
        name,
        privateKey,
        vkey: formatVerifierKey(name, privateKey, 0x04),
        url: '',
        stateFile: join(dir, `w${n}`, 'state.json'),
        port: 0,
        server: null,
      };
    });
    for (const w of witnesses) await listen(w);
    t = await startTestApp(config());
  });
  afterAll(async () => {
    await t?.close();
    for (const w of witnesses) await stop(w);
    rmSync(dir, { recursive: true, force: true });
  });

  const append = (app: TestApp, chain: string, i: number) =>
    app
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: `user_${i}`, action: 'doc.update', resource: `doc:${i}`, chain })
      .expect(201)
      .then((res) => (res.body as { data: { chain: { id: string } } }).data.chain.id);
  const checkpoint = async (app: TestApp, chainId: string): Promise<string> =>
    (
      await app
        .http()
        .get(`/v1/chain/${chainId}/checkpoint`)
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).text;
  const witnessed = (app: TestApp, chainId: string, key: string = KEYS.acme) =>
    app
      .http()
      .get(`/v1/chain/${chainId}/checkpoint/witnessed`)
      .set(...bearer(key));
  const refusals = async (app: TestApp, name: string): Promise<number> => {
    const metric = await app.app.get(Metrics).registry.getSingleMetric('audit_witness_refusals_total')!.get();
    return metric.values.find((v) => v.labels.witness === name)?.value ?? 0;
  };
  const cosignedBy = async (app: TestApp, w: RunningWitness): Promise<number> => {
    const rows = await app.dataSource.query<{ size: number }[]>(
      'SELECT coalesce(max(size), 0)::int AS size FROM checkpoint_log_cosignatures WHERE witness = $1',
      [w.vkey],
    );
    return rows[0]!.size;
  };
  /** Runs rounds until `done` holds (a witness in backoff waits its turn), or fails after 20 s. */
  async function until(app: TestApp, done: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      await app.app.get(WitnessingService).round();
      if (await done()) return;
      if (Date.now() > deadline) throw new Error('not reached within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  interface Bundle {
    checkpoint: string;
    logCheckpoint: string;
    leafIndex: number;
    proof: string[];
    witnesses: number;
  }

  /** The bundle checked independently of the service: signatures, cosignatures, inclusion. */
  function checkBundle(bundle: Bundle, quorum: number): void {
    const log = verifyNote(bundle.logCheckpoint, [parseVerifierKey(logVkey)]);
    expect(log.ok).toBe(true);
    if (!log.ok) return;
    const { origin, size, hash } = parseCheckpoint(log.text);
    expect(origin).toBe(ORIGIN);
    const cosigned = verifiedCosignatures(
      bundle.logCheckpoint,
      witnesses.map((w) => parseCosignatureVerifierKey(w.vkey)),
    );
    expect(cosigned.length).toBeGreaterThanOrEqual(quorum);
    expect(bundle.witnesses).toBe(cosigned.length);
    expect(verifyNote(bundle.checkpoint, [parseVerifierKey(logVkey)]).ok).toBe(true);
    const leaf = leafHash(Buffer.from(bundle.checkpoint, 'utf8'));
    const proof = bundle.proof.map((h) => Buffer.from(h, 'hex'));
    expect(verifyInclusion(bundle.leafIndex, size, leaf, proof, hash)).toBe(true);
  }

  let chainA: string;
  let first: string;

  it('a chain checkpoint gets a witnessed bundle that verifies independently', async () => {
    chainA = await append(t, 'witnessed-a', 1);
    const second = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'user_2', action: 'doc.update', resource: 'doc:2', chain: 'witnessed-a' })
      .expect(201);
    const event = (second.body as { data: { id: string; hash: string; chain: { id: string; position: number } } }).data;
    const eventId = event.id;
    await witnessed(t, chainA).expect(404);
    first = await checkpoint(t, chainA);
    await until(t, async () => (await witnessed(t, chainA)).status === 200);
    const bundle = (await witnessed(t, chainA).expect(200)).body.data as Bundle;
    expect(bundle.checkpoint).toBe(first);
    expect(bundle.witnesses).toBe(3);
    checkBundle(bundle, 3);
    // The offline verifier (docs/contract.md §18): the event's proof, its checkpoint, and the bundle saved as is.
    const saved = (await witnessed(t, chainA).expect(200)).text;
    const proof = (
      await t
        .http()
        .get(`/v1/events/${eventId}/proof`)
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).text;
    for (const [name, text] of [
      ['bundle.json', saved],
      ['proof.json', proof],
      ['cp.txt', first],
    ] as const)
      writeFileSync(join(dir, name), text);
    let out = '';
    const offline = (quorum: string) =>
      run(
        [
          'verify-proof',
          join(dir, 'proof.json'),
          ...['--checkpoint', join(dir, 'cp.txt'), '--key', logVkey, '--witnessed', join(dir, 'bundle.json')],
          ...witnesses.flatMap((w) => ['--witness', w.vkey]),
          ...['--quorum', quorum],
        ],
        { out: (s) => (out += s), err: (s) => (out += s), env: {} },
      );
    expect(await offline('3')).toBe(0);
    expect(out).toMatch(/Witnessed by 3 of 3 given witness[\s\S]*RESULT: VERIFIED/);
    // The console's own check (apps/console/src/verify, Web Crypto, no code shared with the service).
    const browser = await checkWitnessed({
      bundle,
      serviceKey: await consoleVerifierKey(logVkey),
      witnesses: await Promise.all(witnesses.map((w) => parseCosignatureKey(w.vkey))),
      quorum: 3,
      event,
      proofAt: async (size) =>
        (
          await t
            .http()
            .get(`/v1/events/${eventId}/proof`)
            .query({ size })
            .set(...bearer(KEYS.acme))
            .expect(200)
        ).body.data as InclusionProof,
    });
    expect(browser).toMatchObject({ ok: true, cosigned: 3, listed: 3 });
    writeFileSync(join(dir, 'export.json'), await exportJsonText(t, KEYS.acme, chainA));
    out = '';
    const exported = await run(
      [
        'verify-export',
        join(dir, 'export.json'),
        ...['--checkpoint', join(dir, 'cp.txt'), '--key', logVkey, '--witnessed', join(dir, 'bundle.json')],
        ...witnesses.flatMap((w) => ['--witness', w.vkey]),
      ],
      { out: (s) => (out += s), err: (s) => (out += s), env: {} },
    );
    expect({ exported, out }).toMatchObject({
      exported: 0,
      out: expect.stringMatching(/witnessed by 3 of 3/) as unknown,
    });

    const log = await t
      .http()
      .get('/v1/checkpoint-log')
      .set(...bearer(KEYS.acmeReadOnly))
      .expect(200);
    expect(log.headers['content-type']).toMatch(/^text\/plain/);
    expect(
      verifiedCosignatures(
        log.text,
        witnesses.map((w) => parseCosignatureVerifierKey(w.vkey)),
      ),
    ).toHaveLength(3);
    const listed = await t
      .http()
      .get('/v1/witnesses')
      .set(...bearer(KEYS.acmeReadOnly))
      .expect(200);
    expect(listed.body).toEqual({
      data: witnesses.map((w) => ({ name: w.name, key: w.vkey, url: w.url })),
    });
    // Tenancy: another account's key does not see the chain.
    await witnessed(t, chainA, KEYS.globex).expect(404);
    await t
      .http()
      .get('/v1/witnesses')
      .set(...bearer(KEYS.acmeIngestOnly))
      .expect(403);
  });

  it('quorum not met: no new witnessed bundle, the old one stays valid; a witness back up catches up', async () => {
    const w3 = witnesses[2]!;
    await stop(w3);
    await append(t, 'witnessed-a', 3);
    const second = await checkpoint(t, chainA);
    await until(
      t,
      async () => (await cosignedBy(t, witnesses[0]!)) === 2 && (await cosignedBy(t, witnesses[1]!)) === 2,
    );
    expect(await cosignedBy(t, w3)).toBe(1);
    const old = (await witnessed(t, chainA).expect(200)).body.data as Bundle;
    expect(old.checkpoint).toBe(first);
    checkBundle(old, 3);

    await listen(w3);
    await until(t, async () => (await cosignedBy(t, w3)) === 2);
    const caughtUp = (await witnessed(t, chainA).expect(200)).body.data as Bundle;
    expect(caughtUp.checkpoint).toBe(second);
    checkBundle(caughtUp, 3);
    expect(await refusals(t, w3.name)).toBe(0);
  });

  it('a witness whose cosignature the service lost is caught up through the 409 exchange', async () => {
    const w3 = witnesses[2]!;
    // The witness cosigned size 2; the service forgets it (a lost answer) and starts from 0. The table
    // is append-only (migration 1765800000000): the loss is made by a superuser lifting that, as the test.
    const logged = jest.spyOn(Logger.prototype, 'log');
    await attemptSql(t.dataSource, async (m) => {
      await m.query(
        'ALTER TABLE checkpoint_log_cosignatures DISABLE TRIGGER trg_checkpoint_log_cosignatures_reject_delete',
      );
      await m.query('DELETE FROM checkpoint_log_cosignatures WHERE witness = $1', [w3.vkey]);
      await m.query(
        'ALTER TABLE checkpoint_log_cosignatures ENABLE ALWAYS TRIGGER trg_checkpoint_log_cosignatures_reject_delete',
      );
    }).then((error) => expect(error).toBeNull());
    await append(t, 'witnessed-a', 4);
    const third = await checkpoint(t, chainA);
    await until(t, async () => (await cosignedBy(t, w3)) === 3);
    const resubmitted = logged.mock.calls.some(([message]) =>
      /^Witness witness\.test\/w3 is at size [23], not 0: resubmitting from it/.test(String(message)),
    );
    logged.mockRestore();
    expect(resubmitted).toBe(true);
    const bundle = (await witnessed(t, chainA).expect(200)).body.data as Bundle;
    expect(bundle.checkpoint).toBe(third);
    checkBundle(bundle, 3);
    expect(await refusals(t, w3.name)).toBe(0);
  });

  it.each([
    ['checkpoint_log_leaves', 'note'],
    ['checkpoint_log_nodes', 'hash'],
    ['checkpoint_log_checkpoints', 'note'],
    ['checkpoint_log_cosignatures', 'line'],
  ])('%s is append-only, also with replication triggers off (migration 1765800000000)', async (table, column) => {
    for (const sql of [
      `UPDATE ${table} SET ${column} = ${column}`,
      `DELETE FROM ${table}`,
      `TRUNCATE ${table} CASCADE`,
    ]) {
      for (const role of ['origin', 'replica']) {
        const error = await attemptSql(t.dataSource, async (m) => {
          await m.query(`SET LOCAL session_replication_role = ${role}`);
          await m.query(sql);
        });
        expect(error?.message).toMatch(/is not allowed: the audit trail is append-only/);
      }
    }
  });

  it('the rewrite drill: another log under the same key and origin is refused, counted, never witnessed', async () => {
    const before = (await witnessed(t, chainA).expect(200)).body.data as Bundle;
    const forged = await startTestApp(config());
    try {
      const chainB = await append(forged, 'rewritten', 1);
      await checkpoint(forged, chainB);
      // Its log (1 leaf) is smaller than what the witnesses cosigned (3): the service refuses to send.
      await until(forged, async () => (await refusals(forged, witnesses[0]!.name)) >= 1);
      // Grown past their size, it is sent with a consistency proof from 3 that the witnesses reject.
      for (let i = 2; i <= 4; i++) {
        await append(forged, 'rewritten', i);
        await checkpoint(forged, chainB);
      }
      const warned = jest.spyOn(Logger.prototype, 'warn');
      await until(forged, () =>
        Promise.resolve(
          warned.mock.calls.some(([message]) =>
            /^Witness witness\.test\/w1 refused: HTTP 422 for size 4 from 3/.test(String(message)),
          ),
        ),
      );
      warned.mockRestore();
      await witnessed(forged, chainB).expect(404);
      const rows = await forged.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM checkpoint_log_cosignatures',
      );
      expect(rows[0]!.n).toBe(0);
    } finally {
      await forged.close();
    }
    // The genuine service's witnessed bundle still verifies. Asked of its service directly: passport's
    // strategies are process-wide, so the second app in this process now answers the first's keys.
    const [{ id: account }] = await t.dataSource.query<[{ id: string }]>(
      `SELECT audit_uuid_ulid('acc', id) AS id FROM accounts WHERE name = 'acme'`,
    );
    const after = (await t.app.get(WitnessingReadsService).witnessed(account, chainA)).data;
    expect(after).toEqual(before);
    checkBundle(after, 3);
  });
});
