import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import {
  DataSource,
  EntityManager,
  QueryFailedError,
  QueryRunner,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * What repositories run their SQL on: the pool (outside a transaction) or the manager of the
 * transaction a use case opened with `TransactionRunner.run`. Repositories take it as their last
 * parameter and default to the pool, so a service never holds a DataSource or EntityManager.
 */
export type Db = EntityManager;

/** Statement names by text: one name per distinct text, so each call site is one prepared statement. */
const statementNames = new Map<string, string>();

/**
 * `db.query(text, values)` as a named prepared statement: PostgreSQL parses and plans `text` once
 * per connection (pg remembers which names each connection has prepared) instead of at every
 * call. For hot statements whose text is a constant: the inclusion proof's read took ~1.0 ms per
 * call unnamed and ~0.6 ms named, most of the difference planning. Errors are TypeORM's
 * QueryFailedError, as from `db.query`.
 */
export async function queryPrepared<Row extends QueryResultRow>(
  db: Db,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `audit_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  const client: Pool | PoolClient = db.queryRunner
    ? ((await db.queryRunner.connect()) as PoolClient)
    : ((db.connection.driver as PostgresDriver).master as Pool);
  try {
    return (await client.query<Row>({ name, text, values })).rows;
  } catch (error) {
    throw new QueryFailedError(text, values, error as Error);
  }
}

export type IsolationLevel = 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/** SQLSTATE 57014 query_canceled: what a statement past its statement_timeout ends with. */
export const QUERY_CANCELED = '57014';

/**
 * Starts a transaction on `runner` whose every statement PostgreSQL cancels after `timeoutMs`
 * (57014), in one round trip (two statements of the simple protocol; the setting is a number, no
 * parameter can be bound there). SET LOCAL ends with the transaction, however it ends.
 */
export async function beginBounded(runner: QueryRunner, begin: string, timeoutMs: number): Promise<void> {
  await runner.query(`${begin}; SET LOCAL statement_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
}

/** Ends `runner`'s transaction with `sql` and gives its connection back (destroyed when that fails); never throws. */
async function endRunner(runner: QueryRunner, sql: 'COMMIT' | 'ROLLBACK'): Promise<void> {
  let broken: unknown;
  await runner.query(sql).catch((error: unknown) => (broken = error ?? new Error(`${sql} failed`)));
  await releaseRunner(runner, broken).catch(() => undefined);
}

/** Gives `runner`'s connection back, or, after `error` (it could not end its transaction), has pg-pool destroy it. */
export async function releaseRunner(runner: QueryRunner, error?: unknown): Promise<void> {
  if (error === undefined) return runner.release();
  // TypeORM's postgres runner hands an error to pg-pool, which then destroys the client.
  await (runner as unknown as { releasePostgresConnection(error: unknown): Promise<void> }).releasePostgresConnection(
    error,
  );
}

/**
 * Connects `runner` and watches its connection for the rest of its use: when the connection breaks
 * between two statements of a transaction (a failover: the server, or HAProxy in front of it, ends
 * the session), TypeORM releases the runner at once, and the next statement (or the COMMIT) fails
 * with QueryRunnerProviderAlreadyReleasedError (QueryRunnerAlreadyReleasedError), which says nothing
 * of why (the filter's 500). `explain`
 * gives the connection's own error instead ("Connection terminated unexpectedly", SQLSTATE 57P01…:
 * 503 + Retry-After, docs/contract.md §21). Nothing was committed: COMMIT was never sent.
 */
async function connectWatched(
  runner: QueryRunner,
): Promise<{ explain: (error: unknown) => unknown; stop: () => void }> {
  const client = (await runner.connect()) as PoolClient;
  let lost: Error | null = null;
  const onError = (error: Error) => (lost ??= error);
  client.on('error', onError);
  return {
    explain: (error) =>
      lost !== null &&
      (error instanceof QueryRunnerProviderAlreadyReleasedError || error instanceof QueryRunnerAlreadyReleasedError)
        ? lost
        : error,
    stop: () => client.removeListener('error', onError),
  };
}

/** Serialization failures and deadlocks: the transaction wrote nothing and may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

/** The SQLSTATE of a database error, or '' for anything else. */
export function sqlState(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity violation): about the rows, not the database. */
export function isDataError(error: unknown): boolean {
  return /^2[23]/.test(sqlState(error));
}

/**
 * Transactions belong to the use case (Vendure's TransactionWrapper): a service says what runs
 * together, the repositories it calls say how. The one place that retries a transaction the
 * database aborted for a serialization failure or a deadlock, a bounded number of times.
 */
@Injectable()
export class TransactionRunner {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The pool, for repositories called outside a transaction. */
  get pool(): Db {
    return this.dataSource.manager;
  }

  /** Whether the database answers (readiness); throws when it does not. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /**
   * `work` in a READ ONLY transaction whose statements PostgreSQL cancels past `timeoutMs`
   * (SQLSTATE 57014, QUERY_CANCELED): reads over many events (docs/contract.md §8). The server cancels
   * its own statement, so no cancel request sent from here can land on the connection's next
   * statement, and the ROLLBACK that follows ends the aborted transaction and its setting: the
   * connection goes back to the pool idle and at the default timeout. A connection that cannot
   * end its transaction is destroyed, not reused. The answer waits for two round trips (BEGIN +
   * SET, then the work): a read-only transaction has nothing to commit, so its COMMIT goes out
   * after the result is returned and the connection is back in the pool once it is done. (Each
   * round trip is a wake-up of this process and of a backend; with other accounts' statements
   * busy on every core, those wake-ups are what a small read waits for.) PGlite (the embedded
   * database) has no timers in WASM and ignores statement_timeout.
   */
  async runBounded<T>(timeoutMs: number, work: (tx: Db) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    const connection = await connectWatched(runner);
    let result: T;
    try {
      await beginBounded(runner, 'BEGIN READ ONLY', timeoutMs);
      result = await work(runner.manager);
    } catch (error) {
      await endRunner(runner, 'ROLLBACK');
      connection.stop();
      throw connection.explain(error);
    }
    void endRunner(runner, 'COMMIT').finally(connection.stop);
    return result;
  }

  async run<T>(work: (tx: Db) => Promise<T>, isolation: IsolationLevel = 'READ COMMITTED'): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(work, isolation);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(sqlState(error))) throw error;
      }
    }
  }

  /** One transaction (TypeORM's, on a runner of its own): a broken connection fails it with the connection's error. */
  private async once<T>(work: (tx: Db) => Promise<T>, isolation: IsolationLevel): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    const connection = await connectWatched(runner);
    try {
      return await runner.manager.transaction(isolation, work);
    } catch (error) {
      throw connection.explain(error);
    } finally {
      connection.stop();
      await runner.release();
    }
  }
}
