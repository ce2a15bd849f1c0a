import { Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { LRUCache } from 'lru-cache';

/** Keys (API keys, or addresses on public routes) counted at once; the least recently seen go first. */
const MAX_WINDOWS = 100_000;

interface Window {
  /** When each hit still counted stops counting (now + ttl at the hit), oldest first, from `first`. */
  hits: number[];
  first: number;
  expiresAt: number;
  blockExpiresAt: number;
  isBlocked: boolean;
}

/**
 * @nestjs/throttler's in-memory storage, counted the same way (a hit counts for `ttl` after it;
 * past `limit` the key is blocked for `blockDuration`, its hits then reset), without its cost per
 * hit: the library starts a timer for every hit, and every timer, when it fires, filters the array
 * of all live timers of the throttler (quadratic in the request rate). Here a hit is its expiry
 * time in a queue, dropped when the key is next seen; a key holds at most `limit + 1` of them.
 * The keys are a bounded LRU: a flood of addresses on public routes cannot grow it without end
 * (a key pushed out simply starts counting again).
 */
@Injectable()
export class RateLimitStorage implements ThrottlerStorage {
  private readonly windows = new LRUCache<string, Window>({ max: MAX_WINDOWS });

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    const id = `${throttlerName}\u0000${key}`;
    let window = this.windows.get(id);
    if (!window) {
      window = { hits: [], first: 0, expiresAt: now + ttl, blockExpiresAt: 0, isBlocked: false };
      this.windows.set(id, window);
    }
    let timeToExpire = Math.ceil((window.expiresAt - now) / 1000);
    if (timeToExpire <= 0) {
      window.expiresAt = now + ttl;
      timeToExpire = Math.ceil((window.expiresAt - now) / 1000);
    }
    dropExpired(window, now);
    if (!window.isBlocked) window.hits.push(now + ttl);
    if (live(window) > limit && !window.isBlocked) {
      window.isBlocked = true;
      window.blockExpiresAt = now + blockDuration;
    }
    const timeToBlockExpire = Math.ceil((window.blockExpiresAt - now) / 1000);
    if (timeToBlockExpire <= 0 && window.isBlocked) {
      window.isBlocked = false;
      window.hits = [now + ttl];
      window.first = 0;
    }
    return Promise.resolve({ totalHits: live(window), timeToExpire, isBlocked: window.isBlocked, timeToBlockExpire });
  }
}

const live = (window: Window): number => window.hits.length - window.first;

function dropExpired(window: Window, now: number): void {
  const { hits } = window;
  while (window.first < hits.length && hits[window.first]! <= now) window.first++;
  if (window.first > 64 && window.first * 2 > hits.length) {
    window.hits = hits.slice(window.first);
    window.first = 0;
  }
}
