/** A wait that notify() ends early: the sender sleeps on it between events, linger and retries. */
export class Wakeup {
  private waiters: (() => void)[] = [];

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  /** Resolves on notify(), after `ms` (when given), or when `signal` aborts. */
  wait(ms?: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      if (ms !== undefined) timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
      if (signal?.aborted) return done();
      this.waiters.push(done);
    });
  }
}
