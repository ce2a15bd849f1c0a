import { Readable, Writable } from 'node:stream';
import { ExportStalledError, StallGuard } from './stall-guard';

/** A response whose client reads at `bytesPerSecond` (0: stopped): its buffer holds what is not taken. */
class Consumer extends Writable {
  constructor(private readonly bytesPerSecond: number) {
    super({ highWaterMark: 64 * 1024 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    if (this.bytesPerSecond > 0) setTimeout(callback, (chunk.length / this.bytesPerSecond) * 1000);
  }
}

const file = (chunks: number) => Readable.from(Array.from({ length: chunks }, () => Buffer.alloc(8 * 1024, 1)));

describe('StallGuard', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('cuts a consumer that stops taking bytes once the guard has handed over its last one', async () => {
    const stalls: ExportStalledError[] = [];
    const guard = new StallGuard(1, (error) => stalls.push(error));
    const consumer = new Consumer(0);
    file(3).pipe(guard).pipe(consumer); // 24 KiB: all of it fits under the consumer's high-water mark
    await jest.advanceTimersByTimeAsync(100);
    expect(guard.readableEnded).toBe(true);
    expect(consumer.destroyed).toBe(false);

    await jest.advanceTimersByTimeAsync(1500);
    expect(stalls).toEqual([expect.any(ExportStalledError)]);
    expect(consumer.destroyed).toBe(true);
  });

  it('cuts a consumer that stops taking bytes while the guard still holds some', async () => {
    const stalls: ExportStalledError[] = [];
    const guard = new StallGuard(1, (error) => stalls.push(error)).on('error', () => undefined); // the pipeline's
    const consumer = new Consumer(0);
    file(100).pipe(guard).pipe(consumer);
    await jest.advanceTimersByTimeAsync(1600);
    expect(stalls).toHaveLength(1);
    expect(guard.destroyed).toBe(true);
    expect(guard.errored).toBeInstanceOf(ExportStalledError);
    expect(consumer.destroyed).toBe(true);
  });

  it('lets a slow consumer that keeps taking bytes finish', async () => {
    const stalls: ExportStalledError[] = [];
    const guard = new StallGuard(1, (error) => stalls.push(error));
    const consumer = new Consumer(16 * 1024); // 8 KiB every half second
    file(10).pipe(guard).pipe(consumer);
    await jest.advanceTimersByTimeAsync(8000);
    expect(consumer.writableFinished).toBe(true);
    expect(stalls).toEqual([]);
  });
});
