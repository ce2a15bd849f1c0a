import { Spool } from './spool';
import { SpooledEvent } from './spool-recovery';

/** An event waiting to be sent: its number, JSON text and size, and when it was recorded (for the linger). */
export interface QueuedEvent extends SpooledEvent {
  bytes: number;
  at: number;
}

/**
 * The events recorded and not yet taken into a batch, in the order recorded: those held in memory,
 * then, once memory was full in `spill` mode, those only in the spool (a contiguous run of
 * numbers, read back from the files when memory has room again). Memory holds at most
 * `maxBytes` of event text, beyond one event.
 */
export class Backlog {
  private items: QueuedEvent[] = [];
  private head = 0;
  private memoryBytes = 0;
  /** The spilled run: its first number not yet read back, its last, and where to read from. */
  private spill: { next: number; last: number; segment: number; offset: number } | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly spool: Spool | null,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  get bytes(): number {
    return this.memoryBytes;
  }

  get spilled(): number {
    return this.spill ? this.spill.last - this.spill.next + 1 : 0;
  }

  /** The lowest number waiting here, or null when nothing waits. */
  get firstSeq(): number | null {
    return this.items[this.head]?.seq ?? this.spill?.next ?? null;
  }

  get oldestAt(): number | null {
    return this.items[this.head]?.at ?? null;
  }

  /** Whether `bytes` more fit in memory (an empty memory always takes one event). */
  fits(bytes: number): boolean {
    return this.length === 0 || this.memoryBytes + bytes <= this.maxBytes;
  }

  /** Spilled events stay spilled until read back: later ones follow them, to keep the order. */
  get spilling(): boolean {
    return this.spill !== null;
  }

  push(event: QueuedEvent): void {
    this.items.push(event);
    this.memoryBytes += event.bytes;
  }

  /** Notes an event that went to the spool only; `segment` is the file appends went to when it was recorded. */
  pushSpilled(seq: number, segment: number): void {
    if (this.spill) this.spill.last = seq;
    else this.spill = { next: seq, last: seq, segment, offset: 0 };
  }

  /** Puts events back at the front (a refused batch's remainder). */
  unshift(events: QueuedEvent[]): void {
    this.items = [...events, ...this.items.slice(this.head)];
    this.head = 0;
    this.memoryBytes += events.reduce((sum, e) => sum + e.bytes, 0);
  }

  /** Takes up to `maxEvents` from the front, at most `maxBytes` of text (at least one event). */
  take(maxEvents: number, maxBytes: number): QueuedEvent[] {
    const taken: QueuedEvent[] = [];
    let bytes = 0;
    while (this.head < this.items.length && taken.length < maxEvents) {
      const next = this.items[this.head]!;
      if (taken.length > 0 && bytes + next.bytes > maxBytes) break;
      taken.push(next);
      bytes += next.bytes;
      this.head++;
    }
    this.memoryBytes -= bytes;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return taken;
  }

  /** Reads spilled events back into memory while it has room (at least `want` of them when there are). */
  async readBack(want: number): Promise<void> {
    if (!this.spill || !this.spool) return;
    let read = 0;
    while (this.spill && read < want && this.memoryBytes < this.maxBytes) {
      const { segment, offset } = this.spill;
      const { lines, next } = await this.spool.readFrom(segment, offset, 1024 * 1024);
      for (const line of lines) {
        if (line.t !== 'e' || !this.spill || line.n < this.spill.next) continue;
        const bytes = Buffer.byteLength(line.text);
        this.push({ seq: line.n, text: line.text, bytes, at: Date.now() });
        read++;
        if (line.n === this.spill.last) this.spill = null;
        else this.spill.next = line.n + 1;
      }
      if (!this.spill) return;
      this.spill.offset = next;
      if (lines.length > 0) continue;
      const following = this.spool.nextSegment(segment);
      if (following === null) return; // the rest is not on disk yet
      this.spill.segment = following;
      this.spill.offset = 0;
    }
  }
}
