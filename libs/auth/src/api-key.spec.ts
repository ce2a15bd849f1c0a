import { apiKeyPrefix, digestApiKey, generateApiKey } from './api-key';

describe('generateApiKey', () => {
  it('makes secrets with at least 32 random characters after the 8-character prefix people see (contract §12)', () => {
    const keys = Array.from({ length: 200 }, () => generateApiKey());
    for (const key of keys) {
      expect(key).toMatch(/^ats_[A-Za-z0-9_-]{43}$/);
      expect(apiKeyPrefix(key)).toHaveLength(8);
      expect(key.slice(apiKeyPrefix(key).length).length).toBeGreaterThanOrEqual(32);
    }
    // The hidden part alone tells keys apart: nothing of it is shown in listings.
    expect(new Set(keys.map((k) => k.slice(8))).size).toBe(keys.length);
    expect(new Set(keys.map(digestApiKey)).size).toBe(keys.length);
  });
});
