/**
 * What test/upgrade.e2e-spec.ts compares across an upgrade: the fixture's keys, and everything the
 * service answers about an account's data (test/fixtures/make-upgrade-fixture.ts records it with the
 * older build; the test reads it again from the newer one).
 */
export const FIXTURE_KEYS = {
  acme: 'acme-upgrade-fixture-key-0123456789',
  globex: 'globex-upgrade-fixture-key-0123456789',
  operator: 'system-upgrade-fixture-operator-key-0123',
} as const;
export type FixtureKey = keyof typeof FIXTURE_KEYS;
export const FIXTURE_API_KEYS = `acme:${FIXTURE_KEYS.acme},globex:${FIXTURE_KEYS.globex},system:${FIXTURE_KEYS.operator}:operator`;

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are JSON compared as a whole */
export type Call = (
  key: FixtureKey,
  method: string,
  route: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<any>;

/** A caller of the service at `base` with the fixture's keys: JSON answers parsed, a signed note as text; anything ≥ 300 throws. */
export function caller(base: string): Call {
  return async (key, method, route, body, headers = {}) => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { Authorization: `Bearer ${FIXTURE_KEYS[key]}`, 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    if (text === '') return null;
    // A checkpoint is a signed note (text/plain), the rest JSON.
    return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  };
}

/** Every answer the upgrade must keep: per account, events (all pages), chains, statuses, verifications, checkpoints, proofs. */
export async function readEverything(call: Call): Promise<Record<string, any>> {
  const out: Record<string, any> = {};
  for (const key of ['acme', 'globex'] as const) {
    const events: any[] = [];
    let cursor = '';
    do {
      const page = await call(
        key,
        'GET',
        `/v1/events?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      events.push(...page.data);
      cursor = page.nextCursor ?? '';
    } while (cursor);
    const chains: any[] = (await call(key, 'GET', '/v1/chains?limit=100')).data;
    const perChain: Record<string, any> = {};
    for (const chain of chains) {
      // The checkpoint first: a verification counts the checkpoints it checked, and this read signs one.
      const checkpoint = await call(key, 'GET', `/v1/chain/${chain.id}/checkpoint`);
      const status = await call(key, 'GET', `/v1/chain/${chain.id}/status`);
      const verify = await call(key, 'GET', `/v1/chain/${chain.id}/verify`);
      const size = chain.lastPosition as number;
      const consistency =
        size > 1 ? await call(key, 'GET', `/v1/chain/${chain.id}/consistency?from=1&to=${size}`) : null;
      perChain[chain.name] = { status, verify, checkpoint, consistency };
    }
    const proofs: Record<string, any> = {};
    for (const event of events.filter((_, i) => i % 7 === 0)) {
      proofs[event.id] = {
        proof: await call(key, 'GET', `/v1/events/${event.id}/proof`),
        verify: await call(key, 'GET', `/v1/events/${event.id}/verify`),
        byId: await call(key, 'GET', `/v1/events/${event.id}`),
      };
    }
    out[key] = { events, chains, perChain, proofs };
  }
  return out;
}
