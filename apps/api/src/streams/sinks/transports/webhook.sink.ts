import { Webhook } from 'standardwebhooks';
import { toJsonEvent } from '../formats/json-event';
import type { Sink, SinkTarget } from '../sink';
import { baseHeaders, HttpSink } from './http-sink';

/**
 * `webhook`: one POST of `{ type: "audit.events", timestamp, data: { events } }` per batch, signed
 * as Standard Webhooks v1 by the reference library (so any receiver's library verifies it): one
 * signature per secret, space-separated, so both verify during a rotation.
 */
export function webhookSink(target: SinkTarget): Sink {
  const url = new URL(target.url);
  return new HttpSink(target, (batch) => {
    // Made per batch, inside deliver(): a malformed secret is then a failed attempt, not a throw.
    const signers = (target.secrets.webhookSecrets ?? []).map((secret) => new Webhook(secret));
    // Never an unsigned webhook (credentials given again after a lost SECRETS_KEY hold no secret).
    if (signers.length === 0) throw new Error('no signing secret: POST …/rotate-secret makes one');
    const now = new Date();
    const body = JSON.stringify({
      type: 'audit.events',
      timestamp: now.toISOString(),
      data: { events: batch.events.map((event) => toJsonEvent(target.format, event)) },
    });
    const headers = {
      ...baseHeaders(target, 'application/json'),
      'webhook-id': batch.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signers.map((signer) => signer.sign(batch.id, now, body)).join(' '),
    };
    return Promise.resolve([{ url, headers, body: Buffer.from(body, 'utf8') }]);
  });
}
