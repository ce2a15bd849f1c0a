import { request as httpRequest, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import { Response } from 'supertest';
import { canonicalJson, HashingV2 } from '@app/hashing';
import { answerHash } from './support/answer-hash';
import { bearer, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

type EventView = {
  id: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: string;
  hash: string;
  previousHash: string;
  chain: { id: string; name: string; position: number };
  hashing?: HashingV2;
};

const WIDE = 'after=2020-01-01T00:00:00Z&before=2099-12-31T23:59:59.999Z';
const ITEM_KEYS = ['id', 'timestamp', 'actor', 'action', 'resource', 'chain', 'hash', 'previousHash', 'context'];
const CSV_HEADER = 'id,timestamp,actor,action,resource,chain_id,chain_name,chain_position,hash,previous_hash,context';

/** 10,001 rows of one chain, 1 ms apart from BULK_START + 1 ms: a period can hold 10,000 or 10,001. */
const BULK_CHAIN = 'chn_01BX5ZZKBKACTAV9WEVGEMMVRZ';
const BULK_10000 = 'after=2001-01-01T00:00:00.001Z&before=2001-01-01T00:00:10.000Z';
const BULK_10001 = 'after=2001-01-01T00:00:00.001Z&before=2001-01-01T00:00:10.001Z';
const TIES_CHAIN = 'chn_01BX5ZZKBKACTAV9WEVGEMMVS0';

/** Keeps the body as bytes, whatever the content type. */
const raw = (res: Response, done: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  const stream = res as unknown as IncomingMessage;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
};

describe('GET /v1/events/export', () => {
  let t: TestApp;
  const post = (body: object, key: string = KEYS.acme) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send(body)
      .expect(201);
  const exportOf = (query: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(`/v1/events/export?${query}`)
      .set(...bearer(key));
  const bytesOf = async (
    query: string,
    key: string = KEYS.acme,
  ): Promise<{ res: Response; text: string; bytes: Buffer }> => {
    const res = await exportOf(query, key).buffer(true).parse(raw).expect(200);
    const bytes = res.body as Buffer;
    return { res, bytes, text: bytes.toString('utf8') };
  };
  const nonIdleConnections = async (): Promise<number> => {
    const [{ n }] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle'`,
    );
    return n as number;
  };

  beforeAll(async () => {
    t = await startTestApp();
    // One statement: a chain of acme and its 10,001 rows (links and head are placeholders; only counts matter).
    await t.dataSource.query(
      `WITH chain AS (
         INSERT INTO chains (id, account_id, name, created_at)
         SELECT audit_ulid_uuid($1), id, 'exp-bulk', timestamptz '2001-01-01T00:00:00Z'
           FROM accounts WHERE name = 'acme'
         RETURNING id, account_id
       )
       INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
       SELECT audit_ulid_uuid('evt_' || lpad(n::text, 26, '0')), chain.account_id, chain.id, n, 'bulk', 'bulk.load', NULL,
              jsonb_build_object('pad', repeat('x', 2000)), timestamptz '2001-01-01T00:00:00Z' + n * interval '1 millisecond',
              decode(repeat('0', 64), 'hex'), decode(repeat('f', 64), 'hex')
         FROM chain, generate_series(1, 10001) AS n`,
      [BULK_CHAIN],
    );
  });
  afterAll(async () => {
    await t.close();
  });

  describe('period', () => {
    let events: EventView[];
    beforeAll(async () => {
      events = [];
      for (let i = 1; i <= 12; i++)
        events.push((await post({ actor: `bounds-${i}`, action: 'bounds.test', chain: 'exp-bounds' })).body.data);
    });

    it('is inclusive on both ends, using real event timestamps (equal timestamps included), oldest first', async () => {
      const [second, fourth] = [events[1]!, events[3]!];
      const expected = events.filter((e) => e.timestamp >= second.timestamp && e.timestamp <= fourth.timestamp);
      expect(expected.map((e) => e.id)).toEqual(expect.arrayContaining([events[1]!.id, events[2]!.id, events[3]!.id]));
      const query = `format=json&chain_id=${second.chain.id}&after=${second.timestamp}&before=${fourth.timestamp}`;
      const body = (await exportOf(query).expect(200)).body;
      expect(body.data.map((e: EventView) => e.id)).toEqual(expected.map((e) => e.id));
      expect(body.export.count).toBe(expected.length);
    });

    it("includes every row sharing a bound's millisecond, ordered by (timestamp, id) not by position", async () => {
      // One statement, its own chain: positions 1..7 whose ids run against their order within a millisecond.
      await t.dataSource.query(
        `WITH chain AS (
           INSERT INTO chains (id, account_id, name, created_at)
           SELECT audit_ulid_uuid($1), id, 'exp-ties', timestamptz '2002-01-01T00:00:00Z' FROM accounts WHERE name = 'acme'
           RETURNING id, account_id
         )
         INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
         SELECT audit_ulid_uuid('evt_' || repeat('0', 25) || r.letter), chain.account_id, chain.id, r.position, 'tie', 'tie.test', NULL, NULL,
                timestamptz '2002-01-01T00:00:00Z' + r.ms * interval '1 millisecond', decode(repeat('0', 64), 'hex'), decode(repeat('f', 64), 'hex')
           FROM chain, (VALUES (1, 0, 'D'), (2, 1, 'C'), (3, 1, 'A'), (4, 2, 'B'), (5, 3, 'F'), (6, 3, 'E'), (7, 4, 'G')) AS r(position, ms, letter)`,
        [TIES_CHAIN],
      );
      const body = (
        await exportOf(
          `format=json&chain_id=${TIES_CHAIN}&after=2002-01-01T00:00:00.001Z&before=2002-01-01T00:00:00.003Z`,
        ).expect(200)
      ).body;
      expect(body.data.map((e: EventView) => e.id.slice(-1))).toEqual(['A', 'C', 'B', 'E', 'F']);
      expect(body.data.map((e: EventView) => e.chain.position)).toEqual([3, 2, 4, 6, 5]);
    });

    it('a period of one instant exports exactly the events of that millisecond', async () => {
      const fifth = events[4]!;
      const sameInstant = events.filter((e) => e.timestamp === fifth.timestamp).map((e) => e.id);
      const body = (
        await exportOf(
          `format=json&chain_id=${fifth.chain.id}&after=${fifth.timestamp}&before=${fifth.timestamp}`,
        ).expect(200)
      ).body;
      expect(body.data.map((e: EventView) => e.id)).toEqual(sameInstant);
    });
  });

  describe('CSV', () => {
    const tricky = [
      {
        actor: 'comma,inside',
        action: 'say "hi"',
        resource: 'line1\nline2',
        context: { note: 'x\r\ny', formula: '=1+1', b: 1, a: [2.5, null, true] },
      },
      { actor: "=cmd|' /C calc'!A0", action: '+1', resource: '-1', context: null },
      { actor: '@SUM(1)', action: '\tlead-tab', resource: 'cr\rinside', context: { u: 'é€😀' } },
      { actor: 'é€😀', action: 'crlf\r\ninside', resource: null, context: { z: { y: 1, x: 2 } } },
      { actor: '\rleading-cr', action: 'plain', resource: 'a-dash-later', context: {} },
    ];
    let events: EventView[];
    beforeAll(async () => {
      events = [];
      for (const body of tricky) events.push((await post({ ...body, chain: '-exp-csv' })).body.data);
    });

    it('is RFC 4180 with a header row, CRLF after every record, no BOM, parsed back strictly', async () => {
      const { res, bytes, text } = await bytesOf(`format=csv&chain_id=${events[0]!.chain.id}&${WIDE}`);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect([...bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
      expect(text.startsWith(`${CSV_HEADER}\r\n`)).toBe(true);
      expect(text.endsWith('\r\n')).toBe(true);
      const records = parse(text, {
        record_delimiter: '\r\n',
        relax_quotes: false,
        relax_column_count: false,
        skip_empty_lines: false,
        bom: false,
      });
      // Outside quoted fields, every line break is a CRLF record terminator, one per record.
      const unquoted = text.replace(/"(?:[^"]|"")*"/g, '');
      expect(unquoted).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
      expect(unquoted.split('\r\n')).toHaveLength(records.length + 1);
      expect(records[0]).toEqual(CSV_HEADER.split(','));
      expect(records.slice(1).map((r) => r[0])).toEqual(events.map((e) => e.id));
      const cells = records
        .slice(1)
        .map((r) => Object.fromEntries(CSV_HEADER.split(',').map((name, i) => [name, r[i]])));

      expect(cells[0]).toEqual({
        id: events[0]!.id,
        timestamp: events[0]!.timestamp,
        actor: 'comma,inside',
        action: 'say "hi"',
        resource: 'line1\nline2',
        chain_id: events[0]!.chain.id,
        chain_name: "'-exp-csv",
        chain_position: '1',
        hash: events[0]!.hash,
        previous_hash: '0'.repeat(64),
        context: '{"a":[2.5,null,true],"b":1,"formula":"=1+1","note":"x\\r\\ny"}',
      });
      expect(cells[1]).toMatchObject({ actor: "'=cmd|' /C calc'!A0", action: "'+1", resource: "'-1", context: '' });
      expect(cells[2]).toMatchObject({
        actor: "'@SUM(1)",
        action: "'\tlead-tab",
        resource: 'cr\rinside',
        context: '{"u":"é€😀"}',
      });
      expect(cells[3]).toMatchObject({
        actor: 'é€😀',
        action: 'crlf\r\ninside',
        resource: '',
        context: '{"z":{"x":2,"y":1}}',
      });
      expect(cells[4]).toMatchObject({
        actor: "'\rleading-cr",
        action: 'plain',
        resource: 'a-dash-later',
        context: '{}',
      });
      cells.forEach((row, i) => {
        expect(row.context).toBe(events[i]!.context === null ? '' : canonicalJson(events[i]!.context));
        expect(row.previous_hash).toBe(events[i]!.previousHash);
        expect(row.chain_position).toBe(String(i + 1));
      });
    });

    it('quotes exactly the fields that need it', async () => {
      const { text } = await bytesOf(`format=csv&chain_id=${events[0]!.chain.id}&${WIDE}`);
      expect(text).toContain(`,"comma,inside","say ""hi""","line1\nline2",`);
      expect(text).toContain(`,'@SUM(1),'\tlead-tab,"cr\rinside",`);
      expect(text).toContain(`,"'\rleading-cr",plain,a-dash-later,`);
    });

    it('has only the header row when nothing matches, with the file name of the period', async () => {
      const { res, text } = await bytesOf(
        `format=csv&chain_id=${events[0]!.chain.id}&after=2021-03-04T05:06:07.890Z&before=2021-03-04T05:06:08Z`,
      );
      expect(text).toBe(`${CSV_HEADER}\r\n`);
      expect(res.headers['content-disposition']).toBe(
        'attachment; filename="audit-export-20210304T050607Z-20210304T050608Z.csv"',
      );
    });
  });

  describe('JSON', () => {
    let events: EventView[];
    beforeAll(async () => {
      events = [];
      const bodies = [
        {
          actor: '=formula-stays',
          action: 'doc.create',
          resource: 'doc:1',
          context: { n: 1e-7, big: 9007199254740991, nested: { list: [1, 'é€😀', null] }, empty: {} },
        },
        { actor: 'bob', action: 'doc.read', resource: null, context: null },
        { actor: '+bob', action: 'doc.update', resource: 'doc:1', context: { '\tkey': '-value', a: 'line\r\nbreak' } },
      ];
      for (let round = 0; round < 3; round++)
        for (const body of bodies) events.push((await post({ ...body, chain: 'exp-json' })).body.data);
    });

    it('is one valid JSON document whose items re-hash to their stored hashes, oldest first', async () => {
      const res = await exportOf(`format=json&chain_id=${events[0]!.chain.id}&${WIDE}`).expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      const { export: header, data } = res.body as {
        export: Record<string, unknown> & { hashing: Record<string, HashingV2> };
        data: (EventView & { createdAt?: string })[];
      };
      expect(Object.keys(res.body)).toEqual(['export', 'data']);
      // Every event of a new chain is version 2: its salts are in the header, by id (docs/contract.md §17).
      expect(Object.keys(header.hashing).sort()).toEqual(events.map((e) => e.id).sort());
      for (const e of events) expect(header.hashing[e.id]).toEqual(e.hashing);
      expect(header).toEqual({
        format: 'json',
        generatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        period: { after: '2020-01-01T00:00:00.000Z', before: '2099-12-31T23:59:59.999Z' },
        filters: { actor: null, action: null, resource: null, chain_id: events[0]!.chain.id, q: null },
        count: events.length,
        hashing: expect.any(Object),
      });
      expect(data).toHaveLength(events.length);
      expect(data.map((e) => e.id)).toEqual(events.map((e) => e.id));
      for (const [i, item] of data.entries()) {
        expect(Object.keys(item)).toEqual(ITEM_KEYS);
        expect(item.chain).toEqual({ id: events[0]!.chain.id, name: 'exp-json', position: i + 1 });
        expect(answerHash({ ...item, createdAt: item.timestamp, hashing: header.hashing[item.id] })).toBe(item.hash);
        if (i > 0) expect(item.previousHash).toBe(data[i - 1]!.hash);
      }
      expect(data.map((e) => e.timestamp)).toEqual([...data.map((e) => e.timestamp)].sort());
      expect(data[0]!.actor).toBe('=formula-stays');
      expect(data[2]!.context).toEqual({ '\tkey': '-value', a: 'line\r\nbreak' });
    });

    it('echoes the filters, normalizes the period to UTC with ms and names the file in UTC seconds', async () => {
      const query = `format=json&actor=bob&action=doc.read&after=2020-01-01T01:02:03.456%2B02:00&before=2099-12-31T23:59:59.9999Z`;
      const res = await exportOf(query).expect(200);
      expect(res.headers['content-disposition']).toBe(
        'attachment; filename="audit-export-20191231T230203Z-20991231T235959Z.json"',
      );
      expect(res.body.export).toMatchObject({
        period: { after: '2019-12-31T23:02:03.456Z', before: '2099-12-31T23:59:59.999Z' },
        filters: { actor: 'bob', action: 'doc.read', resource: null, chain_id: null },
        count: 3,
      });
      expect(res.body.data.map((e: EventView) => e.id)).toEqual(
        events.filter((e) => e.actor === 'bob').map((e) => e.id),
      );
      const byResource = (
        await exportOf(`format=json&resource=doc:1&chain_id=${events[0]!.chain.id}&${WIDE}`).expect(200)
      ).body;
      expect(byResource.export.filters).toEqual({
        actor: null,
        action: null,
        resource: 'doc:1',
        chain_id: events[0]!.chain.id,
        q: null,
      });
      expect(byResource.data.map((e: EventView) => e.id)).toEqual(
        events.filter((e) => e.resource === 'doc:1').map((e) => e.id),
      );
    });
  });

  describe('limit of 10,000 events', () => {
    it('exports exactly 10,000 in JSON and CSV', async () => {
      const json = await exportOf(`format=json&${BULK_10000}`).expect(200);
      expect(json.body.export.count).toBe(10000);
      expect(json.body.data).toHaveLength(10000);
      expect(json.body.data[0].id).toBe(`evt_${'1'.padStart(26, '0')}`);
      expect(json.body.data[9999].id).toBe(`evt_${'10000'.padStart(26, '0')}`);
      const { text } = await bytesOf(`format=csv&chain_id=${BULK_CHAIN}&${BULK_10000}`);
      expect(text.split('\r\n')).toHaveLength(10002);
    });

    it.each(['json', 'csv'])(
      'answers 10,001 (%s) with 422 EXPORT_LIMIT_EXCEEDED in the error envelope, no file',
      async (format) => {
        for (const query of [
          `format=${format}&${BULK_10001}`,
          `format=${format}&chain_id=${BULK_CHAIN}&${BULK_10001}`,
        ]) {
          const res = await exportOf(query).expect(422);
          expect(res.headers['content-type']).toMatch(/^application\/json/);
          expect(res.headers['content-disposition']).toBeUndefined();
          expect(res.body).toEqual({
            error: { code: 'EXPORT_LIMIT_EXCEEDED', message: expect.any(String), details: { limit: 10000 } },
          });
        }
      },
    );
  });

  describe('validation', () => {
    it.each([
      ['format missing', WIDE, 'format'],
      ['format xml', `format=xml&${WIDE}`, 'format'],
      ['after missing', 'format=json&before=2026-01-01T00:00:00Z', 'after'],
      ['before missing', 'format=json&after=2026-01-01T00:00:00Z', 'before'],
      ['after not ISO 8601', 'format=json&after=yesterday&before=2026-01-01T00:00:00Z', 'after'],
      ['after without an offset', 'format=json&after=2026-01-01T00:00:00&before=2026-01-02T00:00:00Z', 'after'],
      ['after an impossible date', 'format=json&after=2026-02-30T00:00:00Z&before=2026-03-02T00:00:00Z', 'after'],
      ['before not ISO 8601', 'format=csv&after=2026-01-01T00:00:00Z&before=1767225600000', 'before'],
      ['before earlier than after', 'format=json&after=2026-01-02T00:00:00Z&before=2026-01-01T23:59:59.999Z', 'before'],
      [
        'before earlier than after below the millisecond',
        'format=json&after=2026-01-01T00:00:00.0002Z&before=2026-01-01T00:00:00.0001Z',
        'before',
      ],
      ['unknown parameter', `format=json&${WIDE}&limit=5`, 'limit'],
      ['bad chain_id', `format=json&${WIDE}&chain_id=default`, 'chain_id'],
      ['empty actor', `format=json&${WIDE}&actor=`, 'actor'],
      ['repeated parameter', `format=json&format=csv&${WIDE}`, 'format'],
    ])('400 VALIDATION_ERROR: %s', async (_name, query, field) => {
      const res = await exportOf(query).expect(400);
      expect(res.body).toEqual({
        error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: { fields: expect.any(Array) } },
      });
      expect(res.body.error.details.fields).toEqual(expect.arrayContaining([{ field, message: expect.any(String) }]));
      expect(res.headers['content-disposition']).toBeUndefined();
    });

    it('accepts after equal to before, and date-only bounds', async () => {
      await exportOf('format=json&after=2026-01-01T00:00:00Z&before=2026-01-01T00:00:00.000Z').expect(200);
      await exportOf('format=csv&after=2026-01-01&before=2026-01-02').expect(200);
    });

    it('needs a key with the read scope', async () => {
      expect((await t.http().get(`/v1/events/export?format=json&${WIDE}`).expect(401)).body.error.code).toBe(
        'UNAUTHORIZED',
      );
      expect((await exportOf(`format=json&${WIDE}`, KEYS.acmeIngestOnly).expect(403)).body.error.code).toBe(
        'FORBIDDEN',
      );
      await exportOf(`format=json&${WIDE}`, KEYS.acmeReadOnly).expect(200);
    });
  });

  describe('tenancy', () => {
    it("never exports another account's events, even by chain id", async () => {
      const theirs = (await post({ actor: 'globex-secret', action: 'doc.read', chain: 'exp-json' }, KEYS.globex)).body
        .data as EventView;
      const mine = (await exportOf(`format=json&${WIDE}`).expect(200)).body;
      expect(mine.export.count).toBeGreaterThan(0);
      expect(mine.data.map((e: EventView) => e.actor)).not.toContain('globex-secret');
      const byTheirChain = (await exportOf(`format=json&chain_id=${theirs.chain.id}&${WIDE}`).expect(200)).body;
      expect(byTheirChain.export.count).toBe(0);
      expect(byTheirChain.data).toEqual([]);
      const { text } = await bytesOf(`format=csv&${WIDE}`);
      expect(text).not.toContain('globex-secret');
      const theirsOnly = (await exportOf(`format=json&${WIDE}`, KEYS.globex).expect(200)).body;
      expect(theirsOnly.data.map((e: EventView) => e.id)).toEqual([theirs.id]);
    });
  });

  /** Starts a 10,000-row export (about 24 MB), waits for its first bytes and stops reading: the socket buffers fill. */
  async function startExport(
    format: string,
  ): Promise<{ hangUp: () => void; status: number; served: ServerResponse; res: IncomingMessage }> {
    const server = t.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // The only request in flight now: the server's side of it, to see when the server ends it.
    const served = new Promise<ServerResponse>((resolve) =>
      server.once('request', (_req: IncomingMessage, response: ServerResponse) => resolve(response)),
    );
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: `/v1/events/export?format=${format}&${BULK_10000}`,
          headers: { Authorization: `Bearer ${KEYS.acme}` },
        },
        (res) => {
          res.once('data', () => {
            res.pause();
            void served.then((response) =>
              resolve({ status: res.statusCode ?? 0, hangUp: () => req.destroy(), served: response, res }),
            );
          });
        },
      );
      req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
      req.end();
    });
  }

  /** Polls `condition` every 50 ms, `attempts` times at most. */
  async function waitFor(condition: () => Promise<boolean> | boolean, attempts = 100): Promise<boolean> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (await condition()) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  describe('a client that goes away mid-export', () => {
    it.each(['json', 'csv'])('ends the transaction and returns the connection (%s)', async (format) => {
      const baseline = usingPostgres() ? await nonIdleConnections() : 0;
      const { hangUp, status } = await startExport(format);
      expect(status).toBe(200);
      // The first bytes are out while the snapshot is still being read (about 24 MB remain).
      if (usingPostgres()) expect(await nonIdleConnections()).toBe(baseline + 1);
      hangUp();
      if (usingPostgres()) expect(await waitFor(async () => (await nonIdleConnections()) === baseline)).toBe(true);
      // The embedded database has one connection: had it leaked, this would wait and fail.
      const next = await exportOf(
        `format=json&chain_id=${BULK_CHAIN}&after=2001-01-01T00:00:00.001Z&before=2001-01-01T00:00:00.003Z`,
      ).expect(200);
      expect(next.body.export.count).toBe(3);
    });
  });

  describe('a client that stops reading (contract §8)', () => {
    afterEach(() => {
      t.config.exportStallTimeoutSeconds = 30;
    });

    it.each(['json', 'csv'])(
      'is cut after EXPORT_STALL_TIMEOUT_SECONDS, its snapshot and connection released (%s)',
      async (format) => {
        t.config.exportStallTimeoutSeconds = 1;
        const baseline = usingPostgres() ? await nonIdleConnections() : 0;
        const { status, served, hangUp } = await startExport(format);
        expect(status).toBe(200);
        try {
          // Generous bound (20 s) for a 1 s timeout; before, the response stayed open as long as the client did.
          expect(await waitFor(() => served.closed, 400)).toBe(true);
          expect(served.writableFinished).toBe(false);
          if (usingPostgres()) {
            expect(await waitFor(async () => (await nonIdleConnections()) === baseline, 400)).toBe(true);
            const [{ n }] = await t.dataSource.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND state = 'idle in transaction'`,
            );
            expect(n).toBe(0);
          }
          const next = await exportOf(
            `format=json&chain_id=${BULK_CHAIN}&after=2001-01-01T00:00:00.001Z&before=2001-01-01T00:00:00.003Z`,
          ).expect(200);
          expect(next.body.export.count).toBe(3);
        } finally {
          hangUp();
        }
      },
    );

    it('lets appends through while its export is open (the embedded pool has one connection)', async () => {
      const baseline = usingPostgres() ? await nonIdleConnections() : 0;
      const { status, served, hangUp } = await startExport('json');
      expect(status).toBe(200);
      try {
        // Before, on the embedded database, this waited for the export's connection: 503 after 5 s.
        await post({ actor: 'stall', action: 'append.during.export' });
        expect(served.closed).toBe(false);
      } finally {
        hangUp();
      }
      expect(await waitFor(() => served.closed, 400)).toBe(true);
      if (usingPostgres()) expect(await waitFor(async () => (await nonIdleConnections()) === baseline, 400)).toBe(true);
    });
  });
});
