import { resolve } from 'node:path';
import { loadAppConfig } from './app-config';

describe('loadAppConfig', () => {
  it('has the contract defaults', () => {
    const sut = loadAppConfig({});
    expect(sut).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: null,
      rateLimitPerSecond: 1000,
      authFailuresPerMinute: 60,
      bootstrapKeys: [],
      verifyPageSize: 2000,
      idempotencyRetentionHours: 24,
      exportStallTimeoutSeconds: 30,
      exportsPerAccount: 2,
      exportsPerInstance: 5,
    });
    expect(loadAppConfig({ DATABASE_POOL_SIZE: '3' }).exportsPerInstance).toBe(1);
    expect(loadAppConfig({ DATABASE_POOL_SIZE: '40', EXPORTS_PER_ACCOUNT: '3' })).toMatchObject({
      exportsPerAccount: 3,
      exportsPerInstance: 20,
    });
    expect(loadAppConfig({ EXPORTS_PER_INSTANCE: '7' }).exportsPerInstance).toBe(7);
    expect(() => loadAppConfig({ EXPORTS_PER_ACCOUNT: '0' })).toThrow(/EXPORTS_PER_ACCOUNT/);
    expect(loadAppConfig({ EXPORT_STALL_TIMEOUT_SECONDS: '2' }).exportStallTimeoutSeconds).toBe(2);
    expect(() => loadAppConfig({ EXPORT_STALL_TIMEOUT_SECONDS: '0' })).toThrow(/EXPORT_STALL_TIMEOUT_SECONDS/);
    expect(loadAppConfig({ VERIFY_PAGE_SIZE: '7' }).verifyPageSize).toBe(7);
    expect(
      loadAppConfig({ RETIRED_VERIFIER_KEYS: ' audit-trail+aa+AQ==, audit-trail+bb+AQ==\naudit-trail+cc+AQ==' })
        .retiredVerifierKeys,
    ).toEqual(['audit-trail+aa+AQ==', 'audit-trail+bb+AQ==', 'audit-trail+cc+AQ==']);
  });

  it('reads SIGNING_KEY_FILE as an absolute path, unset by default', () => {
    expect(loadAppConfig({}).signingKeyFile).toBeNull();
    expect(loadAppConfig({ SIGNING_KEY_FILE: '/etc/audit-trail/signing.pem' }).signingKeyFile).toBe(
      '/etc/audit-trail/signing.pem',
    );
    expect(loadAppConfig({ SIGNING_KEY_FILE: 'secrets/signing.pem' }).signingKeyFile).toBe(
      resolve('secrets/signing.pem'),
    );
  });

  it('parses API_KEYS with default and explicit scopes', () => {
    const sut = loadAppConfig({
      API_KEYS: 'acme:acme-key-0123456789ab, globex:globex-key-0123456789:read,ops:ops-key-0123456789abc:ingest+read',
    });
    expect(sut.bootstrapKeys).toEqual([
      { account: 'acme', key: 'acme-key-0123456789ab', scopes: ['ingest', 'read'] },
      { account: 'globex', key: 'globex-key-0123456789', scopes: ['read'] },
      { account: 'ops', key: 'ops-key-0123456789abc', scopes: ['ingest', 'read'] },
    ]);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ RATE_LIMIT_PER_SECOND: '-1' }, /RATE_LIMIT_PER_SECOND/],
    [{ AUTH_FAILURES_PER_MINUTE: 'many' }, /AUTH_FAILURES_PER_MINUTE/],
    [{ VERIFY_PAGE_SIZE: '0' }, /VERIFY_PAGE_SIZE/],
    [{ IDEMPOTENCY_RETENTION_HOURS: '23' }, /IDEMPOTENCY_RETENTION_HOURS/],
    [{ SIGNING_KEY_FILE: '/etc/audit-trail/' }, /SIGNING_KEY_FILE must be the path of a file/],
    [{ API_KEYS: 'acme:short' }, /API_KEYS entry 1/],
    [{ API_KEYS: 'acme:acme-key-0123456789ab:admin' }, /API_KEYS entry 1/],
    [{ API_KEYS: 'a b:acme-key-0123456789ab' }, /API_KEYS entry 1/],
  ])('fails fast with a readable message for %j', (env, message) => {
    expect(() => loadAppConfig(env)).toThrow(message);
  });
});
