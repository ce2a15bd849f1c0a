import { SpoolFormatError, SpoolLine } from './spool-format';

/** An event as the spool holds it: its number (order of recording) and its JSON text. */
export interface SpooledEvent {
  seq: number;
  text: string;
}

export interface RecoveredBatch {
  key: string;
  events: SpooledEvent[];
}

/** What a spool's lines leave to do: the live batches first (same keys), then the events never batched. */
export interface RecoveredSpool {
  live: RecoveredBatch[];
  unsent: SpooledEvent[];
  /** The number the next recorded event takes. */
  nextSeq: number;
}

/**
 * Replays the spool's lines, oldest file first (spool-format.ts says what each line means). An
 * event is settled when an acknowledged batch holds it or a refusal rejected it; a batch is live
 * when neither acknowledged nor refused. Events below a header's `below` were settled when their
 * files were removed.
 */
export function recoverSpool(lines: Iterable<SpoolLine>): RecoveredSpool {
  const events = new Map<number, string>();
  const batches = new Map<string, number[]>();
  const settled = new Set<number>();
  const done = new Set<string>();
  let below = 0;
  let nextSeq = 0;
  for (const line of lines) {
    switch (line.t) {
      case 'h':
        below = Math.max(below, line.below);
        nextSeq = Math.max(nextSeq, line.below);
        break;
      case 'e':
        events.set(line.n, line.text);
        nextSeq = Math.max(nextSeq, line.n + 1);
        break;
      case 'b':
        batches.set(line.k, line.n);
        break;
      case 'a':
        done.add(line.k);
        for (const seq of batches.get(line.k) ?? []) settled.add(seq);
        break;
      case 'v':
        done.add(line.k);
        for (const seq of line.r) settled.add(seq);
        break;
    }
  }
  const take = (seq: number): SpooledEvent | null => {
    if (seq < below || settled.has(seq)) return null;
    const text = events.get(seq);
    if (text === undefined) throw new SpoolFormatError(`the spool names event ${seq} but does not hold it`);
    return { seq, text };
  };
  const live: RecoveredBatch[] = [];
  const batched = new Set<number>();
  for (const [key, seqs] of batches) {
    if (done.has(key)) continue;
    const batch = seqs.map(take).filter((e): e is SpooledEvent => e !== null);
    seqs.forEach((seq) => batched.add(seq));
    if (batch.length > 0) live.push({ key, events: batch });
  }
  const unsent = [...events.keys()]
    .filter((seq) => !batched.has(seq))
    .sort((a, b) => a - b)
    .map(take)
    .filter((e): e is SpooledEvent => e !== null);
  return { live, unsent, nextSeq };
}
