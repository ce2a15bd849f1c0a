'use strict';

function sorted(values) {
  return [...values].sort((a, b) => a - b);
}

function median(values) {
  if (values.length === 0) return null;
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Nearest-rank percentile of an already sorted array. */
function percentileOfSorted(s, p) {
  if (s.length === 0) return null;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** How noisy a set of runs was: min, max, and (max - min) / median. */
function spread(values) {
  const clean = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  if (clean.length === 0) return null;
  const med = median(clean);
  const min = Math.min(...clean);
  const max = Math.max(...clean);
  return { min, max, relative: med === 0 ? 0 : (max - min) / med };
}

/** Deterministic PRNG (mulberry32), so that two runs seed the same data. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { median, percentileOfSorted, spread, sorted, prng };
