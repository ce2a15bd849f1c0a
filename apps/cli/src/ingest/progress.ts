/**
 * One line on a terminal, redrawn at most every 100 ms: a bar, done/total lines, events/s. Off a
 * terminal it draws nothing (a log file gets the summary line only). A few lines, not a package.
 */
export class Progress {
  private lastDraw = 0;
  private drawn = false;
  private note = '';
  private readonly started = Date.now();

  constructor(
    private readonly write: (text: string) => void,
    private readonly enabled: boolean,
    private readonly total: number,
  ) {}

  update(done: number, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const share = this.total === 0 ? 1 : Math.min(1, done / this.total);
    const width = 30;
    const filled = Math.round(share * width);
    const rate = done / Math.max(0.001, (now - this.started) / 1000);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
    this.write(
      `\r\x1b[2K${bar} ${Math.round(share * 100)}% ${fmt(done)}/${fmt(this.total)} events · ${fmt(rate)} events/s${this.note}`,
    );
    this.drawn = true;
  }

  /** Shown after the figures until the next batch goes through (e.g. "waiting 2 s: HTTP 429"). */
  setNote(note: string): void {
    this.note = note ? ` · ${note}` : '';
  }

  /** The final figures stay on their line. */
  finish(done: number): void {
    if (!this.enabled) return;
    this.setNote('');
    this.update(done, true);
    this.write('\n');
    this.drawn = false;
  }

  /** Clears the line so that what follows starts on a fresh one. */
  clear(): void {
    if (this.drawn) this.write('\r\x1b[2K');
    this.drawn = false;
  }
}

export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
