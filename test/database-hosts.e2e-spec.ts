import { AddressInfo, createServer } from 'node:net';
import { withAdmin } from './support/postgres';
import { SessionProxy } from './support/session-proxy';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/** A port nothing listens on (taken from the system, then freed): connections to it are refused at once. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The fresh database's URL with `hosts` in place of its one host, and `query` added. */
function withHosts(url: string, hosts: string[], query = ''): string {
  const parsed = new URL(url);
  const auth = parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : '';
  return `postgres://${auth}${hosts.join(',')}${parsed.pathname}${query}`;
}

/**
 * DATABASE_URL naming several hosts as libpq writes them (docs/contract.md §21). A host that refuses
 * connections, and "standbys" (a proxy to the same server whose sessions are read-only), need a
 * server we can reach by TCP: PostgreSQL only.
 */
(usingPostgres() ? describe : describe.skip)('DATABASE_URL with several hosts', () => {
  let t: TestApp | null = null;
  const proxies: SessionProxy[] = [];
  afterEach(async () => {
    await t?.close();
    t = null;
    await Promise.all(proxies.splice(0).map((p) => p.stop()));
  });

  const append = (actor: string) =>
    t!
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor, action: 'hosts.test', chain: 'hosts' })
      .then((r) => r);
  /** A proxy to the server of `url` (127.0.0.1:5432 here, the PostgreSQL container in Docker). */
  const proxy = async (url: string, readOnly: boolean) => {
    const { hostname, port } = new URL(url);
    const started = await new SessionProxy({ host: hostname, port: Number(port || 5432) }, readOnly).start();
    proxies.push(started);
    return started;
  };
  const target = (url: string) => new URL(url);

  it('starts and serves when the first host refuses connections (target_session_attrs unset: any)', async () => {
    const database = await freshDatabase();
    const url = withHosts(database.url!, [`127.0.0.1:${await deadPort()}`, target(database.url!).host]);
    t = await startTestApp({}, { ...database, url });
    const created = await append('first');
    expect(created.status).toBe(201);
    await t
      .http()
      .get(`/v1/events/${created.body.data.id}`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    // Whole-chain verification reads on worker threads of their own connections: they choose too.
    const verified = await t
      .http()
      .get(`/v1/chain/${created.body.data.chain.id}/verify`)
      .set(...bearer(KEYS.acme));
    expect(verified.status).toBe(200);
    expect(verified.body.data.valid).toBe(true);
  });

  it('target_session_attrs=read-write passes over a read-only host (a standby) to the writable one', async () => {
    const database = await freshDatabase();
    const standby = await proxy(database.url!, true);
    const primary = await proxy(database.url!, false);
    const url = withHosts(
      database.url!,
      [`127.0.0.1:${standby.port}`, `127.0.0.1:${primary.port}`],
      '?target_session_attrs=read-write',
    );
    t = await startTestApp({}, { ...database, url });
    // Appends write: on a read-only session they would fail (25006).
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => append(`rw-${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(standby.opened).toBeGreaterThan(0);
    expect(standby.open).toBe(0);
    expect(primary.open).toBeGreaterThan(0);
  });

  it('after a failover (the host in use turns read-only, its sessions end) reaches the other without a restart: 201 or 503 + Retry-After meanwhile', async () => {
    const database = await freshDatabase();
    const name = target(database.url!).pathname.slice(1);
    const first = await proxy(database.url!, false);
    const second = await proxy(database.url!, true);
    const url = withHosts(
      database.url!,
      [`127.0.0.1:${first.port}`, `127.0.0.1:${second.port}`],
      '?target_session_attrs=read-write',
    );
    t = await startTestApp({}, { ...database, url });
    expect((await append('before')).status).toBe(201);
    // The promotion: the first host becomes a standby, the second the primary, and the old sessions end.
    first.readOnly = true;
    second.readOnly = false;
    await withAdmin((admin) =>
      admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      ),
    );
    const seen: number[] = [];
    for (let attempt = 0; attempt < 20 && seen.at(-1) !== 201; attempt++) {
      const res = await append(`after-${attempt}`);
      seen.push(res.status);
      if (res.status !== 201) {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBeDefined();
      }
    }
    expect(seen.at(-1)).toBe(201);
    const [{ n }] = await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM events`);
    expect(n).toBe(2);
    expect(second.open).toBeGreaterThan(0);
  });
});
