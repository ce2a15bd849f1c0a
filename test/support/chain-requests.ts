import { bearer, TestApp } from './test-app';

/**
 * Appends `count` events to a new chain `name` of `key`'s account in one batch, stamped `ageSeconds`
 * ago (the service's clock, Date.now, set back while it appends), and returns the chain's id: old
 * events for retention's tests without waiting.
 */
export async function appendAgedChain(
  t: TestApp,
  key: string,
  { name, count, ageSeconds = 0 }: { name: string; count: number; ageSeconds?: number },
): Promise<string> {
  const spy = ageSeconds > 0 ? jest.spyOn(Date, 'now').mockReturnValue(Date.now() - ageSeconds * 1000) : null;
  try {
    const events = Array.from({ length: count }, (_, i) => ({
      actor: 'a',
      action: 'x.y',
      chain: name,
      context: { i },
    }));
    const res = await t
      .http()
      .post('/v1/events/batch')
      .set(...bearer(key))
      .send({ events })
      .expect(201);
    return (res.body as { data: { chain: { id: string } }[] }).data[0]!.chain.id;
  } finally {
    spy?.mockRestore();
  }
}

/** GET /v1/chain/:chainId/status with `key`, expected 200: the chain's status. */
export async function chainStatus(
  t: TestApp,
  chainId: string,
  key: string,
): Promise<
  Record<string, unknown> & { firstPosition: number; effectiveLegalHold: boolean; legalHoldBy: string | null }
> {
  const res = await t
    .http()
    .get(`/v1/chain/${chainId}/status`)
    .set(...bearer(key))
    .expect(200);
  return (res.body as { data: Awaited<ReturnType<typeof chainStatus>> }).data;
}

/** GET /v1/chain/:chainId/verify with `key`, expected 200: the whole-chain verification. */
export async function chainVerification(
  t: TestApp,
  chainId: string,
  key: string,
): Promise<{ valid: boolean; errors: { position: number; message: string }[] }> {
  const res = await t
    .http()
    .get(`/v1/chain/${chainId}/verify`)
    .set(...bearer(key))
    .expect(200);
  return (res.body as { data: Awaited<ReturnType<typeof chainVerification>> }).data;
}
