import { ArgumentsHost } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { GlobalExceptionFilter } from '@app/common';
import { dataSourceOptions, Db, TransactionRunner } from '@app/database';
import { SessionProxy } from './support/session-proxy';
import { freshDatabase, usingPostgres } from './support/test-app';

/** What the service's exception filter answers for `error`: status, headers and error code. */
function answerTo(error: unknown): { status: number; headers: Record<string, string>; code: string } {
  const answer = { status: 0, headers: {} as Record<string, string>, code: '' };
  const response = {
    headersSent: false,
    setHeader: (name: string, value: string) => (answer.headers[name] = value),
    status: (status: number) => {
      answer.status = status;
      return { json: (body: { error: { code: string } }) => (answer.code = body.error.code) };
    },
  };
  const request = { method: 'POST', headers: {}, url: '/v1/events', route: { path: '/v1/events' } };
  const host = {
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => request }),
  } as unknown as ArgumentsHost;
  new GlobalExceptionFilter().catch(error, host);
  return answer;
}

/** Until TypeORM has seen the connection of `tx` break (it then releases the runner). */
async function untilBroken(tx: Db): Promise<void> {
  for (let waited = 0; !tx.queryRunner?.isReleased; waited += 10) {
    if (waited > 5000) throw new Error('the connection did not break');
    await sleep(10);
  }
}

/**
 * A transaction whose connection breaks between two of its statements, as in a failover (the
 * leader, or HAProxy in front of it, ends every session; docs/contract.md §21): the request
 * answers 503 + Retry-After, never 500. Through a TCP proxy that drops every session at once.
 * PostgreSQL only: the embedded database runs in this process, there is no connection to cut.
 */
(usingPostgres() ? describe : describe.skip)('a transaction cut between two statements', () => {
  let proxy: SessionProxy;
  let dataSource: DataSource;
  let runner: TransactionRunner;
  let databaseUrl: string;
  /** The database through the proxy. */
  let proxied: string;
  beforeAll(async () => {
    databaseUrl = (await freshDatabase()).url!;
  });
  beforeEach(async () => {
    const url = new URL(databaseUrl);
    proxy = await new SessionProxy({ host: url.hostname, port: Number(url.port || 5432) }).start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    proxied = url.href;
    dataSource = await new DataSource(
      dataSourceOptions({ url: url.href, poolSize: 2, applicationName: 'transaction-cut' }),
    ).initialize();
    runner = new TransactionRunner(dataSource);
  });
  afterEach(async () => {
    await proxy.stop();
    await dataSource.destroy().catch(() => undefined);
  });

  it('a write transaction fails with the connection’s error: 503 + Retry-After', async () => {
    const failure: unknown = await runner
      .run(async (tx) => {
        await tx.query('SELECT 1');
        await proxy.stop();
        await untilBroken(tx);
        await tx.query('SELECT 2');
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(answerTo(failure)).toEqual({
      status: 503,
      headers: { 'Retry-After': expect.any(String) },
      code: 'SERVICE_UNAVAILABLE',
    });
  });

  it('cut after its last statement: the COMMIT fails with the connection’s error (nothing was committed), 503', async () => {
    const failure: unknown = await runner
      .run(async (tx) => {
        await tx.query('SELECT 1');
        await proxy.stop();
        await untilBroken(tx);
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(answerTo(failure)).toEqual({
      status: 503,
      headers: { 'Retry-After': expect.any(String) },
      code: 'SERVICE_UNAVAILABLE',
    });
  });

  it('a write that reaches a server refusing writes (a standby mid-promotion behind HAProxy): 503, not 500', async () => {
    // Sessions opened from now on are read-only, as a hot standby's are.
    proxy.readOnly = true;
    const standby = await new DataSource(
      dataSourceOptions({ url: proxied, poolSize: 1, applicationName: 'transaction-cut' }),
    ).initialize();
    const failure: unknown = await new TransactionRunner(standby)
      .run(async (tx) => {
        await tx.query('CREATE TABLE written_on_a_standby (x int)');
      })
      .catch((error: unknown) => error);
    await standby.destroy();
    expect(failure).toMatchObject({ code: '25006' });
    expect(answerTo(failure)).toEqual({
      status: 503,
      headers: { 'Retry-After': expect.any(String) },
      code: 'SERVICE_UNAVAILABLE',
    });
  });

  it('a bounded read the same', async () => {
    const failure: unknown = await runner
      .runBounded(5000, async (tx) => {
        await tx.query('SELECT 1');
        await proxy.stop();
        await untilBroken(tx);
        await tx.query('SELECT 2');
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(answerTo(failure)).toEqual({
      status: 503,
      headers: { 'Retry-After': expect.any(String) },
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});
