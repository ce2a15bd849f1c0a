import { hexBytes } from './hex-bytes.transformer';

describe('hexBytes', () => {
  const hex = '00ff'.repeat(16);

  it('writes 64 hex characters as their 32 bytes, and reads them back as lowercase hex', () => {
    const stored = hexBytes.to(hex) as Buffer;
    expect(stored).toEqual(Buffer.from(hex, 'hex'));
    expect(stored.length).toBe(32);
    expect(hexBytes.from(stored)).toBe(hex);
    expect(hexBytes.from(Buffer.alloc(32))).toBe('0'.repeat(64));
  });

  it('passes null (and undefined on the way in) through', () => {
    expect(hexBytes.to(null)).toBeNull();
    expect(hexBytes.to(undefined)).toBeUndefined();
    expect(hexBytes.from(null)).toBeNull();
  });
});
