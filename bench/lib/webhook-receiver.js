'use strict';

const http = require('node:http');

/** A request body the receiver reads at most (a batch of 1,000 events is about 0.5 MB). */
const MAX_BODY_BYTES = 50 * 1024 * 1024;

/**
 * The receiver of the `streams` scenario: an HTTP server in the bench process on 127.0.0.1 that
 * answers each webhook POST to /d/<route> as soon as its body has arrived (200, or what the route's
 * `status()` says, e.g. 503 during an outage), then hands the batch's events and their arrival time
 * (Date.now() when the body ended) to the route's `onEvents`. It checks no signature: it measures
 * delivery, and a receiver that answers at once is what the target assumes (docs/contract.md §16 "Throughput").
 */
class WebhookReceiver {
  constructor() {
    this.routes = new Map();
    this.server = http.createServer((req, res) => this.handle(req, res));
    // Longer than the service's keep-alive, so that a connection is never closed just as it is reused.
    this.server.keepAliveTimeout = 65_000;
    this.server.headersTimeout = 66_000;
    this.server.requestTimeout = 0;
    this.baseUrl = null;
  }

  async start() {
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', resolve);
    });
    this.baseUrl = `http://127.0.0.1:${this.server.address().port}`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Registers `/d/<name>`: `status()` is asked for each request's answer (200 by default),
   * `onEvents(events, arrivedAt)` gets the events of each acknowledged batch. Returns the route,
   * whose counters (`answers` by status, `firstOkAt`, `malformed`) the scenario reads.
   */
  route(name, { status = () => 200, onEvents }) {
    const route = { url: `${this.baseUrl}/d/${name}`, status, onEvents, answers: {}, firstOkAt: null, malformed: 0 };
    this.routes.set(`/d/${name}`, route);
    return route;
  }

  handle(req, res) {
    const route = req.method === 'POST' ? this.routes.get(req.url) : undefined;
    if (!route) {
      req.resume();
      res.statusCode = 404;
      res.end();
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const at = Date.now();
      const status = route.status();
      res.statusCode = status;
      res.end();
      route.answers[status] = (route.answers[status] || 0) + 1;
      if (status !== 200) return;
      if (route.firstOkAt === null) route.firstOkAt = at;
      const events = eventsOf(Buffer.concat(chunks));
      if (events === null) route.malformed++;
      else route.onEvents(events, at);
    });
  }
}

/** A webhook body's `data.events` (docs/contract.md §16: `{ type, timestamp, data: { events } }`), or null. */
function eventsOf(body) {
  try {
    const parsed = JSON.parse(body.toString('utf8'));
    const events = parsed && parsed.data && parsed.data.events;
    return Array.isArray(events) ? events : null;
  } catch {
    return null;
  }
}

/**
 * Which events arrived, one bit per (chain, position): exact for millions of events in a few MB,
 * where a set of ids would take hundreds. Counts the distinct events, the repeats (delivery is at
 * least once) and the first receipts that came after a later position of their chain (order).
 */
class DeliveredEvents {
  constructor() {
    this.chains = new Map();
    this.distinct = 0;
    this.repeated = 0;
    this.outOfOrder = 0;
  }

  /** Records one event (the API's Event: `chain.id`, `chain.position`); true when it is new. */
  add(event) {
    const position = event.chain.position;
    let chain = this.chains.get(event.chain.id);
    if (!chain) {
      chain = { bits: new Uint8Array(1024), last: 0 };
      this.chains.set(event.chain.id, chain);
    }
    const byte = position >>> 3;
    if (byte >= chain.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, chain.bits.length * 2));
      grown.set(chain.bits);
      chain.bits = grown;
    }
    const mask = 1 << (position & 7);
    if (chain.bits[byte] & mask) {
      this.repeated++;
      return false;
    }
    chain.bits[byte] |= mask;
    this.distinct++;
    if (position < chain.last) this.outOfOrder++;
    else chain.last = position;
    return true;
  }
}

module.exports = { WebhookReceiver, DeliveredEvents };
