import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '@app/common';

const WINDOW_MS = 60_000;
/** Client addresses tracked at once; beyond, the least recently seen is forgotten (memory stays bounded). */
const ADDRESSES_MAX = 100_000;

interface Window {
  failures: number;
  resetAt: number;
}

/**
 * AUTH_FAILURES_PER_MINUTE per client address, in fixed one-minute windows. A key of unknown
 * standing reserves a failure before it is looked up, so concurrent guesses cannot overrun the
 * limit, and gives it back when it proves valid. (@nestjs/throttler's storage keeps every key it
 * ever saw and one timer per hit, which an address-rotating flood would turn into memory.)
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly windows = new LRUCache<string, Window>({ max: ADDRESSES_MAX, ttl: WINDOW_MS });

  constructor(private readonly config: AppConfig) {}

  get limitPerMinute(): number {
    return this.config.authFailuresPerMinute;
  }

  /** Reserves one failure for the address: null when admitted, else the seconds until it may try again. */
  admit(address: string): number | null {
    if (this.limitPerMinute === 0) return null;
    const now = Date.now();
    const window = this.windows.get(address);
    if (!window) {
      this.windows.set(address, { failures: 1, resetAt: now + WINDOW_MS });
      return null;
    }
    if (window.failures >= this.limitPerMinute) return Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    window.failures++;
    return null;
  }

  /** Gives back a reservation: the key was valid, or could not be checked. */
  forgive(address: string): void {
    const window = this.windows.get(address);
    if (window && window.failures > 0) window.failures--;
  }
}
