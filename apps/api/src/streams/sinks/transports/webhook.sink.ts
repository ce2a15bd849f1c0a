import { createHmac } from 'node:crypto';
import { jsonEventsBytes } from '../formats/json-event';
import type { Sink, SinkTarget } from '../sink';
import { baseHeaders, HttpSink } from './http-sink';
import { httpUrlProblem, JSON_FORMATS, type SinkKind } from '../sink-kind';

const PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A Standard Webhooks secret's key: the base64 after `whsec_` (as the reference library reads it); throws for a malformed one. */
export function webhookKey(secret: string): Buffer {
  const text = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (!BASE64.test(text) || text.length === 0) throw new Error('a webhook secret is not valid base64');
  return Buffer.from(text, 'base64');
}

/**
 * `v1,` + base64 of HMAC-SHA256(key, `${id}.${seconds}.` ‖ body): Standard Webhooks v1's signature,
 * the reference library's `Webhook.sign` (whose pure-JavaScript SHA-256 cost more than everything
 * else a destination does per event; http-kinds.spec.ts checks that library verifies ours), with
 * Node's native HMAC over the body's bytes as they are sent.
 */
export function webhookSignature(key: Buffer, id: string, seconds: number, body: readonly Buffer[]): string {
  const hmac = createHmac('sha256', key).update(`${id}.${seconds}.`);
  for (const part of body) hmac.update(part);
  return `v1,${hmac.digest('base64')}`;
}

/**
 * `webhook`: one POST of `{ type: "audit.events", timestamp, data: { events } }` per batch, signed
 * as Standard Webhooks v1: one signature per secret, space-separated, so both verify during a
 * rotation. The events' JSON is made once per batch of the same events (formats/json-event.ts):
 * destinations reading the same page share it.
 */
export function webhookSink(target: SinkTarget): Sink {
  const url = new URL(target.url);
  return new HttpSink(target, (batch) => {
    // Read per batch, inside deliver(): a malformed secret is then a failed attempt, not a throw.
    const keys = (target.secrets.webhookSecrets ?? []).map(webhookKey);
    // Never an unsigned webhook (credentials given again after a lost SECRETS_KEY hold no secret).
    if (keys.length === 0) throw new Error('no signing secret: POST …/rotate-secret makes one');
    const now = new Date();
    const seconds = Math.floor(now.getTime() / 1000);
    // JSON.stringify({ type, timestamp, data: { events } }), byte for byte.
    const body = [
      Buffer.from(`{"type":"audit.events","timestamp":"${now.toISOString()}","data":{"events":[`, 'utf8'),
      jsonEventsBytes(target.format, batch.events),
      Buffer.from(']}}', 'utf8'),
    ];
    const headers = {
      ...baseHeaders(target, 'application/json'),
      'webhook-id': batch.id,
      'webhook-timestamp': String(seconds),
      'webhook-signature': keys.map((key) => webhookSignature(key, batch.id, seconds, body)).join(' '),
    };
    return Promise.resolve([{ url, headers, body: Buffer.concat(body) }]);
  });
}

/** `webhook`: an https URL (its signing secret is made by the service, not a setting). */
export const webhookKind: SinkKind<'webhook'> = {
  kind: 'webhook',
  formats: JSON_FORMATS,
  fields: {},
  urlProblem: httpUrlProblem,
  open: webhookSink,
};
