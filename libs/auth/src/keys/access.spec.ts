import { AppError } from '@app/common';
import { assertMayChange, assertMayGive, assertMayManage, holdsEvery, manageableAccount } from './access';

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

describe('the account a caller may manage, or 404 (contract §6)', () => {
  const own = 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2';
  const other = 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D3';
  const ownAdmin = { keyId: 'key_a', accountId: own, scopes: ['admin'] as const };
  const reads: string[] = [];
  const read = (id: string) => {
    reads.push(id);
    return Promise.resolve(id === own || id === other ? { id } : null);
  };

  it('an admin gets its own account; another account, a missing one or a malformed id is the same 404, and is never read', async () => {
    reads.length = 0;
    await expect(manageableAccount(ownAdmin, own, read)).resolves.toEqual({ id: own });
    for (const id of [other, 'acc_nope', `${own}x`]) {
      await expect(manageableAccount(ownAdmin, id, read)).rejects.toMatchObject({
        code: 'NOT_FOUND',
        message: expect.stringContaining(`Account ${id}`) as unknown,
      });
    }
    expect(reads).toEqual([own]);
  });

  it('an operator and the CLI get any account that exists; one that does not is 404', async () => {
    await expect(manageableAccount(operator, other, read)).resolves.toEqual({ id: other });
    await expect(manageableAccount('cli', own, read)).resolves.toEqual({ id: own });
    await expect(manageableAccount(operator, 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D4', read)).rejects.toBeInstanceOf(AppError);
  });

  it('assertMayManage answers the same 404 without reading anything', () => {
    expect(() => assertMayManage(ownAdmin, own)).not.toThrow();
    expect(() => assertMayManage(ownAdmin, other)).toThrow(AppError);
    expect(() => assertMayManage(operator, 'not-an-id')).toThrow(/Account not-an-id/);
  });
});
