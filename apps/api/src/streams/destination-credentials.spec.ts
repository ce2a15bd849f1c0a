import { newWebhookSecret, rotated, ROTATION_OVERLAP_MS, WebhookSecret } from './destination-credentials';

describe('webhook secrets', () => {
  const now = new Date('2026-11-28T00:00:00.000Z');
  const later = (ms: number) => new Date(now.getTime() + ms).toISOString();

  it('are whsec_ + base64 of 32 random bytes, never twice the same', () => {
    const sut = newWebhookSecret();
    expect(sut).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(sut.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(sut);
  });

  it('rotate: the new one first, the current one kept 24 hours', () => {
    const sut = rotated([{ secret: 'old', until: null }], 'new', now);
    expect(sut).toEqual([
      { secret: 'new', until: null },
      { secret: 'old', until: later(ROTATION_OVERLAP_MS) },
    ]);
  });

  it('rotate: keeps only the current one beside the new one, however often it rotates (two signatures at most, P8)', () => {
    const secrets: WebhookSecret[] = [
      { secret: 'current', until: null },
      { secret: 'recent', until: later(3_600_000) },
      { secret: 'expired', until: later(-1) },
    ];
    expect(rotated(secrets, 'new', now)).toEqual([
      { secret: 'new', until: null },
      { secret: 'current', until: later(ROTATION_OVERLAP_MS) },
    ]);
    let many: WebhookSecret[] = [{ secret: 'first', until: null }];
    for (let i = 0; i < 300; i++) many = rotated(many, `s${i}`, now);
    expect(many.map((s) => s.secret)).toEqual(['s299', 's298']);
  });
});
