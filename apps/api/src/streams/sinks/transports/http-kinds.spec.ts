import { Webhook } from 'standardwebhooks';
import { gunzipSync } from 'node:zlib';
import { like } from '@app/common/testing/like.fixture';
import { openSink } from '../open-sink';
import { Receiver, sampleEvents, sampleTarget, selfSignedCertificate } from '../sink.fixture';
import type { Sink } from '../sink';
import { DATADOG_MAX_BYTES, datadogChunks } from './datadog.sink';

const secret = (n: number) => `whsec_${Buffer.alloc(32, n).toString('base64')}`;
const signal = () => new AbortController().signal;

describe('HTTP kinds', () => {
  const receiver = new Receiver();
  let base: string;
  let sut: Sink;

  beforeAll(async () => {
    base = await receiver.start();
  });
  afterEach(async () => {
    await sut.close();
    receiver.requests.length = 0;
    receiver.respond = (_, response) => {
      response.writeHead(204).end();
    };
  });
  afterAll(() => receiver.stop());

  describe('webhook', () => {
    it('signs as Standard Webhooks v1: the receiver verifies it, webhook-id is the batch id', async () => {
      sut = openSink(sampleTarget('webhook', `${base}/hook`, { secrets: { webhookSecrets: [secret(1)] } }));
      const events = sampleEvents(3);
      await expect(sut.deliver({ id: 'msg_batch_1', events }, signal())).resolves.toEqual({ ok: true });

      const [request] = receiver.requests;
      expect(request!.path).toBe('/hook');
      expect(request!.headers['webhook-id']).toBe('msg_batch_1');
      const payload = new Webhook(secret(1)).verify(
        request!.body.toString(),
        request!.headers as Record<string, string>,
      );
      expect(payload).toEqual({ type: 'audit.events', timestamp: like.any(String), data: { events } });
    });

    it('sends JSON.stringify of the body byte for byte, non-ASCII included, each batch of the same events the same', async () => {
      sut = openSink(sampleTarget('webhook', base, { secrets: { webhookSecrets: [secret(1)] } }));
      const events = sampleEvents(3, { actor: 'zoë 🦊 "quoted" \\ \u2028', context: { note: 'ünïcode', n: 1 } });
      await sut.deliver({ id: 'msg_a', events }, signal());
      await sut.deliver({ id: 'msg_b', events: events.slice(0, 2) }, signal());
      await sut.deliver({ id: 'msg_c', events }, signal());
      for (const [i, request] of receiver.requests.entries()) {
        const text = request.body.toString('utf8');
        const parsed = JSON.parse(text) as { timestamp: string };
        const sent = i === 1 ? events.slice(0, 2) : events;
        expect(text).toBe(
          JSON.stringify({ type: 'audit.events', timestamp: parsed.timestamp, data: { events: sent } }),
        );
        expect(() => new Webhook(secret(1)).verify(text, request.headers as Record<string, string>)).not.toThrow();
      }
    });

    it('answers a malformed secret with a failed attempt, never an unsigned request', async () => {
      sut = openSink(sampleTarget('webhook', base, { secrets: { webhookSecrets: ['whsec_not base64!'] } }));
      await expect(sut.deliver({ id: 'b', events: sampleEvents(1) }, signal())).resolves.toMatchObject({
        ok: false,
        status: null,
        action: 'retry',
      });
      expect(receiver.requests).toHaveLength(0);
    });

    it('signs with both secrets during a rotation: the new one and the old one verify', async () => {
      sut = openSink(sampleTarget('webhook', base, { secrets: { webhookSecrets: [secret(2), secret(1)] } }));
      await expect(sut.deliver({ id: 'msg_batch_2', events: sampleEvents(1) }, signal())).resolves.toEqual({
        ok: true,
      });

      const [request] = receiver.requests;
      const headers = request!.headers as Record<string, string>;
      expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
      expect(() => new Webhook(secret(2)).verify(request!.body.toString(), headers)).not.toThrow();
      expect(() => new Webhook(secret(1)).verify(request!.body.toString(), headers)).not.toThrow();
      expect(() => new Webhook(secret(3)).verify(request!.body.toString(), headers)).toThrow();
    });

    it('keeps the webhook-id on a retry of the same batch, and carries OCSF objects with format ocsf', async () => {
      sut = openSink(sampleTarget('webhook', base, { format: 'ocsf', secrets: { webhookSecrets: [secret(1)] } }));
      const batch = { id: 'msg_batch_3', events: sampleEvents(2) };
      await sut.deliver(batch, signal());
      await sut.deliver(batch, signal());
      expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(['msg_batch_3', 'msg_batch_3']);
      const body = JSON.parse(receiver.requests[0]!.body.toString()) as { data: { events: { class_uid: number }[] } };
      expect(body.data.events.map((e) => e.class_uid)).toEqual([6003, 6003]);
    });

    it('sends the custom headers, but never lets one replace a signature or framing header', async () => {
      sut = openSink(
        sampleTarget('webhook', base, {
          headers: { 'X-Tenant': 'acme', 'Webhook-Signature': 'v1,forged', 'Transfer-Encoding': 'chunked', Host: 'x' },
          secrets: { webhookSecrets: [secret(1)] },
        }),
      );
      await sut.deliver({ id: 'msg_batch_4', events: sampleEvents(1) }, signal());
      const [request] = receiver.requests;
      expect(request!.headers['x-tenant']).toBe('acme');
      expect(request!.headers['webhook-signature']).not.toContain('forged');
      expect(request!.headers['transfer-encoding']).toBeUndefined();
      expect(request!.headers.host).toBe(new URL(base).host);
    });
  });

  describe('splunk_hec', () => {
    it('POSTs newline-separated HEC events to /services/collector/event with the Splunk token', async () => {
      const target = sampleTarget('splunk_hec', `${base}/`, {
        secrets: { token: 'hec-token-1234' },
        options: { index: 'audit' },
      });
      sut = openSink(target);
      const events = sampleEvents(2);
      await expect(sut.deliver({ id: 'b', events }, signal())).resolves.toEqual({ ok: true });

      const [request] = receiver.requests;
      expect(request!.path).toBe('/services/collector/event');
      expect(request!.headers.authorization).toBe('Splunk hec-token-1234');
      const lines = request!.body
        .toString()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toEqual(
        events.map((event) => ({
          time: Date.parse(event.timestamp) / 1000,
          host: 'audit-1.example.com',
          source: 'audit-trail',
          sourcetype: '_json',
          index: 'audit',
          event,
        })),
      );
      expect(lines[0]!.time).toBe(1795332293.449);
    });

    it('uses the given sourcetype', async () => {
      sut = openSink(
        sampleTarget('splunk_hec', base, { secrets: { token: 't' }, options: { sourcetype: 'audit:event' } }),
      );
      await sut.deliver({ id: 'b', events: sampleEvents(1) }, signal());
      expect(JSON.parse(receiver.requests[0]!.body.toString())).toMatchObject({ sourcetype: 'audit:event' });
    });
  });

  describe('datadog', () => {
    it('POSTs a gzipped JSON array to /api/v2/logs with DD-API-KEY, at most 1,000 entries a request', async () => {
      sut = openSink(sampleTarget('datadog', `${base}/intake`, { secrets: { apiKey: 'dd-key-5678' } }));
      const events = sampleEvents(1001);
      await expect(sut.deliver({ id: 'b', events }, signal())).resolves.toEqual({ ok: true });

      expect(receiver.requests).toHaveLength(2);
      const entries = receiver.requests.flatMap((request) => {
        expect(request.path).toBe('/intake/api/v2/logs');
        expect(request.headers['dd-api-key']).toBe('dd-key-5678');
        expect(request.headers['content-encoding']).toBe('gzip');
        return JSON.parse(gunzipSync(request.body).toString()) as Record<string, string>[];
      });
      expect(receiver.requests.map((r) => (JSON.parse(gunzipSync(r.body).toString()) as unknown[]).length)).toEqual([
        1000, 1,
      ]);
      expect(entries[0]).toEqual({
        ddsource: 'audit-trail',
        service: 'audit-trail',
        hostname: 'audit-1.example.com',
        message: JSON.stringify(events[0]),
      });
      expect(entries.map((e) => (JSON.parse(e.message!) as { id: string }).id)).toEqual(events.map((e) => e.id));
    });

    it('splits by size: no request above 5 MB uncompressed', () => {
      const entry = JSON.stringify({ message: 'x'.repeat(1024 * 1024) });
      const chunks = datadogChunks(Array.from({ length: 12 }, () => entry));
      expect(chunks.map((chunk) => chunk.length)).toEqual([4, 4, 4]);
      for (const chunk of chunks)
        expect(Buffer.byteLength(`[${chunk.join(',')}]`)).toBeLessThanOrEqual(DATADOG_MAX_BYTES);
    });

    it('is not acknowledged unless every request is', async () => {
      let served = 0;
      receiver.respond = (_, response) => {
        response.writeHead(served++ === 0 ? 202 : 503).end();
      };
      sut = openSink(sampleTarget('datadog', base, { secrets: { apiKey: 'dd-key-5678' } }));
      await expect(sut.deliver({ id: 'b', events: sampleEvents(1500) }, signal())).resolves.toMatchObject({
        ok: false,
        status: 503,
        action: 'retry',
      });
    });
  });

  describe('otlp', () => {
    it('POSTs OTLP/HTTP JSON to /v1/logs: one logRecord per event, with the audit attributes', async () => {
      sut = openSink(sampleTarget('otlp', base));
      const events = sampleEvents(2);
      await expect(sut.deliver({ id: 'b', events }, signal())).resolves.toEqual({ ok: true });

      const [request] = receiver.requests;
      expect(request!.path).toBe('/v1/logs');
      expect(request!.headers['content-type']).toBe('application/json');
      const body = JSON.parse(request!.body.toString()) as {
        resourceLogs: { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[];
      };
      const records = body.resourceLogs[0]!.scopeLogs[0]!.logRecords;
      expect(records).toHaveLength(2);
      expect(records[0]).toEqual({
        timeUnixNano: '1795332293449000000',
        severityNumber: 9,
        severityText: 'INFO',
        body: { stringValue: JSON.stringify(events[0]) },
        attributes: [
          { key: 'audit.event.id', value: { stringValue: events[0]!.id } },
          { key: 'audit.chain.id', value: { stringValue: events[0]!.chain.id } },
          { key: 'audit.chain.position', value: { intValue: '1' } },
          { key: 'audit.action', value: { stringValue: 'invoice.approve' } },
          { key: 'audit.actor', value: { stringValue: 'alice@example.com' } },
        ],
      });
    });
  });

  it('resolves a host name at the connection and connects to the address it checked', async () => {
    sut = openSink(sampleTarget('otlp', base.replace('127.0.0.1', 'localhost')));
    await expect(sut.deliver({ id: 'b', events: sampleEvents(1) }, signal())).resolves.toEqual({ ok: true });
    expect(receiver.requests).toHaveLength(1);
  });
});

describe('HTTPS', () => {
  const certificate = selfSignedCertificate();
  const receiver = new Receiver(certificate);
  let base: string;

  beforeAll(async () => {
    base = await receiver.start();
  });
  afterAll(() => receiver.stop());

  it('verifies the receiver against the trusted CAs: a certificate Node does not trust is a network error', async () => {
    const sut = openSink(sampleTarget('splunk_hec', base, { secrets: { token: 'hec-token-1234' } }));
    await expect(sut.deliver({ id: 'b', events: sampleEvents(1) }, signal())).resolves.toMatchObject({
      ok: false,
      status: null,
      action: 'retry',
      message: like.stringMatching(/certificate/i) as string,
    });
    await sut.close();
    expect(receiver.requests).toHaveLength(0);
  });

  it('delivers once the receiver is trusted', async () => {
    const sut = openSink(
      sampleTarget('splunk_hec', base, { secrets: { token: 'hec-token-1234' }, ca: certificate.cert }),
    );
    await expect(sut.deliver({ id: 'b', events: sampleEvents(1) }, signal())).resolves.toEqual({ ok: true });
    await sut.close();
    expect(receiver.requests).toHaveLength(1);
  });
});
