'use strict';

const { once } = require('node:events');
const { Client, Pool } = require('pg');

/** The bench database's name: fresh for each run, dropped at the end. */
function benchDatabaseName(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `audit_bench_${stamp}_${process.pid}`;
}

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withClient(url, fn) {
  const client = new Client({ connectionString: url, application_name: 'audit-bench' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function createDatabase(baseUrl, name) {
  await withClient(baseUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  return withDatabase(baseUrl, name);
}

async function dropDatabase(baseUrl, name) {
  await withClient(baseUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

function pool(url, max) {
  return new Pool({ connectionString: url, max, application_name: 'audit-bench' });
}

/**
 * Connects `n` separate clients (one per simulated application instance / request loop). A
 * client's connection ended by the server between queries (the forced DROP DATABASE of cleanup on
 * Ctrl-C) is an 'error' event: without a listener it would end the bench before it drops the
 * other database; a query on it still fails.
 */
async function connectClients(url, n) {
  const clients = [];
  try {
    for (let i = 0; i < n; i++) {
      const client = new Client({ connectionString: url, application_name: 'audit-bench' });
      client.on('error', () => undefined);
      await client.connect();
      clients.push(client);
    }
  } catch (error) {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    throw error;
  }
  return clients;
}

/** A value in PostgreSQL's COPY text format: \N for NULL, backslash escapes for the rest. */
function copyText(value) {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\n\r\t]/g, (ch) =>
    ch === '\\' ? '\\\\' : ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : '\\t',
  );
}

/**
 * COPY … FROM STDIN through node-postgres without an extra package: a "submittable" (the
 * interface pg's own Query implements) that sends the statement, then streams the chunks of
 * `source` (an async iterable of Buffers) as CopyData, honouring the socket's back-pressure.
 */
class CopyFromStdin {
  constructor(text, source) {
    this.text = text;
    this.source = source;
    this.failed = null;
    this.rowCount = null;
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection) {
    connection.query(this.text);
  }

  handleCopyInResponse(connection) {
    this.pump(connection).catch((error) => {
      this.failed = error;
      connection.sendCopyFail(String(error && error.message ? error.message : error).slice(0, 200));
    });
  }

  async pump(connection) {
    for await (const chunk of this.source) {
      if (this.failed) return;
      connection.sendCopyFromChunk(chunk);
      if (connection.stream.writableNeedDrain) await once(connection.stream, 'drain');
    }
    if (!this.failed) connection.endCopyFrom();
  }

  handleCommandComplete(msg) {
    const match = /COPY (\d+)/.exec(msg.text || '');
    this.rowCount = match ? Number(match[1]) : null;
  }

  handleReadyForQuery() {
    if (this.failed) this.reject(this.failed);
    else this.resolve(this.rowCount);
  }

  handleError(error) {
    this.failed = this.failed || error;
    this.reject(this.failed);
  }

  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}
}

async function copyFrom(client, text, source) {
  const copy = new CopyFromStdin(text, source);
  client.query(copy);
  return copy.done;
}

module.exports = {
  benchDatabaseName,
  withDatabase,
  withClient,
  createDatabase,
  dropDatabase,
  pool,
  connectClients,
  copyText,
  copyFrom,
};
