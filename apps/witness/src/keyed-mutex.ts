/**
 * Runs tasks one at a time per key, in arrival order; tasks of different keys run concurrently.
 * The witness checks a submission against what it last cosigned and records the new checkpoint
 * under its origin's turn, so two submissions can never both pass the check (c2sp.org/tlog-witness:
 * otherwise a slower, smaller one could roll the record back).
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
