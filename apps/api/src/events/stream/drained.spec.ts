import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { drained, type Drainable } from './drained';

/** A writable whose consumer takes a chunk only when told to (a reader that reads slowly, or not at all). */
function slowConsumer() {
  const pending: (() => void)[] = [];
  const out = new Writable({
    highWaterMark: 16,
    write(_chunk, _encoding, callback) {
      pending.push(callback);
    },
  });
  return { out, take: () => pending.shift()?.() };
}

describe('drained', () => {
  it('resolves when the consumer has taken what was buffered', async () => {
    const { out, take } = slowConsumer();
    expect(out.write('x'.repeat(64))).toBe(false);
    const wait = drained(out, 10_000);
    setTimeout(take, 20);
    await expect(wait).resolves.toBe('drained');
    expect(out.listenerCount('drain') + out.listenerCount('close')).toBe(0);
  });

  it('reports a consumer that takes nothing for the stall time as stalled', async () => {
    const { out } = slowConsumer();
    out.write('x'.repeat(64));
    const started = Date.now();
    await expect(drained(out, 100)).resolves.toBe('stalled');
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(out.listenerCount('drain') + out.listenerCount('close')).toBe(0);
  });

  it('ends at once when the writable closes or the signal aborts, or was already destroyed', async () => {
    const closing = slowConsumer().out;
    closing.write('x'.repeat(64));
    const wait = drained(closing, 10_000);
    closing.destroy();
    await expect(wait).resolves.toBe('closed');

    const out = Object.assign(new EventEmitter(), { destroyed: false }) as unknown as Drainable;
    const ended = new AbortController();
    const aborted = drained(out, 10_000, ended.signal);
    ended.abort();
    await expect(aborted).resolves.toBe('closed');
    await expect(drained(out, 10_000, ended.signal)).resolves.toBe('closed');
    await expect(drained(closing, 10_000)).resolves.toBe('closed');
  });
});
