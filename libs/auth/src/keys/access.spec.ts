import { AppError } from '@app/common';
import { assertMayChange, assertMayGive, holdsEvery } from './access';

const admin = { keyId: 'key_a', accountId: 'acc_a', scopes: ['admin'] as const };
const operator = { keyId: 'key_o', accountId: 'acc_s', scopes: ['operator'] as const };

describe('who may change which key (contract §12)', () => {
  it('an admin holds ingest, read and admin, never operator; an operator and the CLI hold every scope', () => {
    expect(holdsEvery(admin, ['ingest', 'read', 'admin'])).toBe(true);
    expect(holdsEvery(admin, ['read', 'operator'])).toBe(false);
    expect(holdsEvery(operator, ['ingest', 'read', 'admin', 'operator'])).toBe(true);
    expect(holdsEvery('cli', ['operator'])).toBe(true);
  });

  it('revoking or rotating a key with a scope the caller lacks is 403 naming the key and the scope', () => {
    let thrown: unknown;
    try {
      assertMayChange(admin, { id: 'key_x', scopes: ['read', 'operator'] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'FORBIDDEN', details: { keyId: 'key_x', scopes: ['operator'] } });
    expect(() => assertMayChange(operator, { id: 'key_x', scopes: ['admin'] })).not.toThrow();
  });

  it('giving: an admin at most ingest+read+admin; operator only to keys of system', () => {
    expect(() => assertMayGive(admin, 'acme', ['operator'])).toThrow(AppError);
    expect(() => assertMayGive(operator, 'acme', ['operator'])).toThrow(/only for keys of the account 'system'/);
    expect(() => assertMayGive(operator, 'system', ['operator'])).not.toThrow();
    expect(() => assertMayGive(admin, 'acme', ['ingest', 'read', 'admin'])).not.toThrow();
  });
});
