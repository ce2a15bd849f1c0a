import { freshDatabase, bearer, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/**
 * DATABASE_READ_URL that names no standby of DATABASE_URL (docs/contract.md §21): here another
 * database of the same server, whose WAL position is the primary's own, so the floor check alone
 * (replayed ≥ the primary's position) lets it serve. Reads there would miss what the primary just
 * acknowledged, or show another installation's (or an old copy's, erased values included) events.
 * ReadReplica uses a replica only while it is in recovery, of the primary's cluster and database.
 * PostgreSQL only: the embedded database takes no DATABASE_READ_URL.
 */
(usingPostgres() ? describe : describe.skip)('DATABASE_READ_URL that is not a standby of DATABASE_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    const other = await freshDatabase();
    t = await startTestApp({ databaseReadUrl: other.url, readReplicaMaxLagMs: 1000 });
    // The replica's lag is measured every 250 ms from the start: long enough for it to look usable.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }, 30_000);
  afterAll(async () => {
    await t?.close();
  });

  it('serves every read from the primary: an event just acknowledged is listed, searched and proven', async () => {
    for (let i = 0; i < 3; i++) {
      const actor = `identity-${i}`;
      const created = await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor, action: 'replica.identity', chain: 'identity' })
        .expect(201);
      const id = (created.body as { data: { id: string } }).data.id;
      const listed = await t
        .http()
        .get('/v1/events?limit=100')
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect((listed.body as { data: { id: string }[] }).data.map((e) => e.id)).toContain(id);
      const searched = await t
        .http()
        .get(`/v1/events?q=${encodeURIComponent(`actor:"${actor}"`)}`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect((searched.body as { data: { id: string }[] }).data.map((e) => e.id)).toEqual([id]);
      await t
        .http()
        .get(`/v1/events/${id}/proof`)
        .set(...bearer(KEYS.acme))
        .expect(200);
    }
  });
});
