import { QueryFailedError } from 'typeorm';
import { queryPrepared, sqlState, TransactionRunner } from '@app/database';
import { startTestApp, TestApp } from './support/test-app';

/**
 * queryPrepared (libs/database transaction-runner.ts) on the real database: a named prepared
 * statement on the connection it runs on, prepared once whatever the number of calls, inside a
 * transaction or on the pool, with TypeORM's error type like `db.query`.
 */
describe('queryPrepared', () => {
  let t: TestApp;
  let runner: TransactionRunner;
  beforeAll(async () => {
    t = await startTestApp();
    runner = t.app.get(TransactionRunner);
  });
  afterAll(async () => {
    await t.close();
  });

  const TEXT = 'SELECT $1::int + 1 AS next /* prepared-statements.e2e */';

  it('prepares the statement once on the transaction’s connection and runs it with new values each time', async () => {
    const { results, prepared } = await runner.run(async (tx) => {
      const results: number[] = [];
      for (const n of [1, 41, -3]) results.push((await queryPrepared<{ next: number }>(tx, TEXT, [n]))[0]!.next);
      const prepared = await tx.query<{ name: string; statement: string }[]>(
        `SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE '%prepared-statements.e2e%'`,
      );
      return { results, prepared };
    });
    expect(results).toEqual([2, 42, -2]);
    expect(prepared).toEqual([{ name: expect.stringMatching(/^audit_[0-9a-f]{24}$/), statement: TEXT }]);
  });

  it('runs on the pool outside a transaction', async () => {
    const rows = await queryPrepared<{ next: number }>(runner.pool, TEXT, [9]);
    expect(rows).toEqual([{ next: 10 }]);
  });

  it('fails as db.query does: a QueryFailedError carrying the SQLSTATE', async () => {
    const error = await queryPrepared(runner.pool, 'SELECT 1 / $1::int AS x', [0]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryFailedError);
    expect(sqlState(error)).toBe('22012');
  });
});
