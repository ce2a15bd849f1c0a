import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { parseVerifierKey, verifyChainCheckpoint } from '@app/hashing';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp } from './support/test-app';

/** One database, three starts: signing with key A, then with key B, without and with A retired. */
describe('rotating the checkpoint signing key', () => {
  const seedA = randomBytes(32).toString('base64');
  const seedB = randomBytes(32).toString('base64');
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let t: TestApp | null = null;

  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await t?.close();
    t = null;
  });
  afterAll(() => rmSync(database.dataDir, { recursive: true, force: true }));

  const start = async (signingKey: string, retiredVerifierKeys: string[] = []): Promise<TestApp> => {
    t = await startTestApp({ signingKey, retiredVerifierKeys }, database);
    return t;
  };
  const get = (app: TestApp, path: string) =>
    app
      .http()
      .get(path)
      .set(...bearer(KEYS.acme));
  let chainId = '';
  let keyA = '';

  it('with key A: a chain and a checkpoint signed by A', async () => {
    const app = await start(seedA);
    for (let i = 1; i <= 3; i++) {
      const res = await app
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'alice', action: 'doc.update', chain: 'rotation', context: { i } })
        .expect(201);
      chainId = res.body.data.chain.id;
    }
    keyA = (await app.http().get('/v1/checkpoint-key').expect(200)).text.trim();
    const note = (await get(app, `/v1/chain/${chainId}/checkpoint`).expect(200)).text;
    expect(verifyChainCheckpoint(note, [parseVerifierKey(keyA)])).toMatchObject({ ok: true, checkpoint: { size: 3 } });
    expect((await get(app, `/v1/chain/${chainId}/verify`).expect(200)).body.data).toMatchObject({
      valid: true,
      checkpointsChecked: 1,
    });
  });

  it('with key B alone: the checkpoint A signed no longer verifies, and the answer says why', async () => {
    const app = await start(seedB);
    const result = (await get(app, `/v1/chain/${chainId}/verify`).expect(200)).body.data;
    expect(result).toMatchObject({
      valid: false,
      firstInvalidPosition: 3,
      errors: [expect.objectContaining({ position: 3 })],
    });
    expect(result.errors[0].message).toMatch(/signed by an earlier key missing from RETIRED_VERIFIER_KEYS/);
  });

  it('with key B and A retired: the chain verifies, and the checkpoint is served signed by B', async () => {
    const app = await start(seedB, [keyA]);
    expect((await get(app, `/v1/chain/${chainId}/verify`).expect(200)).body.data).toMatchObject({
      valid: true,
      checkpointsChecked: 1,
      errors: [],
    });
    const keyB = (await app.http().get('/v1/checkpoint-key').expect(200)).text.trim();
    expect(keyB).not.toBe(keyA);
    const note = (await get(app, `/v1/chain/${chainId}/checkpoint`).expect(200)).text;
    expect(verifyChainCheckpoint(note, [parseVerifierKey(keyB)])).toMatchObject({ ok: true, checkpoint: { size: 3 } });
    expect(verifyChainCheckpoint(note, [parseVerifierKey(keyA)]).ok).toBe(false);
  });
});
