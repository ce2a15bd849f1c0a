import { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { Db, TransactionRunner } from './transaction-runner';

/**
 * The runner's own rule, with TypeORM's query runner replaced by one whose transaction fails as the
 * test says (its connection a bare event emitter: the runner watches it for a cut).
 */
function runnerFailing(errors: Error[]) {
  const attempts: string[] = [];
  const released: number[] = [];
  const dataSource = {
    createQueryRunner: () => ({
      connect: () => Promise.resolve(new EventEmitter()),
      release: () => Promise.resolve(void released.push(attempts.length)),
      manager: {
        transaction: (isolation: string, work: (tx: Db) => Promise<unknown>) => {
          attempts.push(isolation);
          const error = errors.shift();
          return error ? Promise.reject(error) : work({} as Db);
        },
      },
    }),
  } as unknown as DataSource;
  return { attempts, released, sut: new TransactionRunner(dataSource) };
}

const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
const serialization = () => Object.assign(new Error('could not serialize access'), { code: '40001' });

describe('TransactionRunner', () => {
  it('runs the work again after a serialization failure or deadlock (how an append batch is retried)', async () => {
    const { attempts, released, sut } = runnerFailing([deadlock(), serialization()]);
    await expect(sut.run(() => Promise.resolve('written'))).resolves.toBe('written');
    expect(attempts).toEqual(['READ COMMITTED', 'READ COMMITTED', 'READ COMMITTED']);
    // Each attempt on a connection of its own, given back whatever became of it.
    expect(released).toEqual([1, 2, 3]);
  });

  it('does not retry other errors', async () => {
    const refusal = Object.assign(new Error('invalid input syntax'), { code: '22P02' });
    const { attempts, sut } = runnerFailing([refusal]);
    await expect(sut.run(() => Promise.resolve('written'), 'SERIALIZABLE')).rejects.toBe(refusal);
    expect(attempts).toEqual(['SERIALIZABLE']);
  });

  it('gives up after a bounded number of attempts', async () => {
    const { attempts, sut } = runnerFailing(Array.from({ length: 10 }, deadlock));
    await expect(sut.run(() => Promise.resolve('written'))).rejects.toMatchObject({ code: '40P01' });
    expect(attempts).toHaveLength(5);
  });
});
