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

  it('reads the observability settings of contract §11, refusing bad ones', () => {
    expect(loadAppConfig({})).toMatchObject({
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
      logLevel: 'info',
      logFormat: 'json',
      trustProxy: false,
    });
    expect(loadAppConfig({ METRICS_PORT: '0', LOG_LEVEL: 'silent', LOG_FORMAT: 'pretty' })).toMatchObject({
      metricsPort: 0,
      logLevel: 'silent',
      logFormat: 'pretty',
    });
    expect(() => loadAppConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
    expect(() => loadAppConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL must be one of fatal, error/);
    expect(() => loadAppConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });

  it('reads the retention settings of contract §14, refusing bad ones', () => {
    expect(loadAppConfig({})).toMatchObject({
      retentionSweepSeconds: 3600,
      retentionClockOffsetSeconds: 0,
      holdReleaseDelayHours: 24,
      auditMinRetentionDays: 365,
      retentionVacuum: 'auto',
    });
    for (const mode of ['auto', 'plain', 'full', 'off'])
      expect(loadAppConfig({ RETENTION_VACUUM: mode }).retentionVacuum).toBe(mode);
    expect(() => loadAppConfig({ RETENTION_VACUUM: 'always' })).toThrow(/RETENTION_VACUUM/);
    expect(
      loadAppConfig({ RETENTION_SWEEP_SECONDS: '0', RETENTION_CLOCK_OFFSET_SECONDS: String(400 * 86400) }),
    ).toMatchObject({ retentionSweepSeconds: 0, retentionClockOffsetSeconds: 400 * 86400 });
    expect(() => loadAppConfig({ RETENTION_SWEEP_SECONDS: '-1' })).toThrow(/RETENTION_SWEEP_SECONDS/);
    expect(() => loadAppConfig({ RETENTION_CLOCK_OFFSET_SECONDS: '1.5' })).toThrow(/RETENTION_CLOCK_OFFSET_SECONDS/);
    expect(loadAppConfig({ HOLD_RELEASE_DELAY_HOURS: '48', AUDIT_MIN_RETENTION_DAYS: '730' })).toMatchObject({
      holdReleaseDelayHours: 48,
      auditMinRetentionDays: 730,
    });
    expect(() => loadAppConfig({ HOLD_RELEASE_DELAY_HOURS: '-1' })).toThrow(/HOLD_RELEASE_DELAY_HOURS/);
    expect(() => loadAppConfig({ AUDIT_MIN_RETENTION_DAYS: '0' })).toThrow(/AUDIT_MIN_RETENTION_DAYS/);
    expect(() => loadAppConfig({ AUDIT_MIN_RETENTION_DAYS: '36501' })).toThrow(/AUDIT_MIN_RETENTION_DAYS/);
  });

  it('reads the switches true or false, nothing else, and every problem at once', () => {
    expect(loadAppConfig({})).toMatchObject({ streamDelivery: true, streamAllowPrivateNetworks: false });
    expect(loadAppConfig({ STREAM_DELIVERY: 'false', STREAM_ALLOW_PRIVATE_NETWORKS: 'true' })).toMatchObject({
      streamDelivery: false,
      streamAllowPrivateNetworks: true,
    });
    expect(() => loadAppConfig({ STREAM_DELIVERY: 'no', STREAM_ALLOW_PRIVATE_NETWORKS: '1' })).toThrow(
      /STREAM_DELIVERY must be one of true, false\n- STREAM_ALLOW_PRIVATE_NETWORKS must be one of true, false/,
    );
  });

  it('reads DATABASE_URL and DATABASE_READ_URL as postgres:// URLs; a replica needs a primary', () => {
    const primary = 'postgres://u@h1:5432,h2/audit?target_session_attrs=read-write';
    const replica = 'postgresql://u@h3/audit';
    expect(loadAppConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica })).toMatchObject({
      databaseUrl: primary,
      databaseReadUrl: replica,
    });
    expect(loadAppConfig({})).toMatchObject({ databaseUrl: null, databaseReadUrl: null });
    expect(() => loadAppConfig({ DATABASE_URL: 'mysql://h/db' })).toThrow(/DATABASE_URL must be a postgres:\/\/ URL/);
    expect(() => loadAppConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'http://h3' })).toThrow(
      /DATABASE_READ_URL must be a postgres:\/\/ URL/,
    );
    expect(() => loadAppConfig({ DATABASE_URL: 'postgres://h1/a?target_session_attrs=standby' })).toThrow(
      /target_session_attrs/,
    );
    expect(() => loadAppConfig({ DATABASE_READ_URL: replica })).toThrow(/DATABASE_READ_URL needs DATABASE_URL/);
  });

  it('reads DATABASE_MIGRATIONS: run (the default) or check, nothing else', () => {
    expect(loadAppConfig({}).databaseMigrations).toBe('run');
    expect(loadAppConfig({ DATABASE_MIGRATIONS: 'check' }).databaseMigrations).toBe('check');
    expect(loadAppConfig({ DATABASE_MIGRATIONS: 'run' }).databaseMigrations).toBe('run');
    expect(() => loadAppConfig({ DATABASE_MIGRATIONS: 'skip' })).toThrow(
      /DATABASE_MIGRATIONS must be one of run, check/,
    );
  });

  it('reads TRUST_PROXY as Express takes it: true, a hop count, or addresses and CIDRs', () => {
    const trust = (value: string) => loadAppConfig({ TRUST_PROXY: value }).trustProxy;
    expect(trust('true')).toBe(true);
    expect(trust('false')).toBe(false);
    expect(trust('2')).toBe(2);
    expect(trust('loopback, 10.0.0.0/8,192.168.1.7, fd00::/8, 172.16.0.0/255.240.0.0')).toEqual([
      'loopback',
      '10.0.0.0/8',
      '192.168.1.7',
      'fd00::/8',
      '172.16.0.0/255.240.0.0',
    ]);
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.300', 'proxy.example.com', '::1/129', '10.0.0.1,', '-1']) {
      expect(() => loadAppConfig({ TRUST_PROXY: bad })).toThrow(/TRUST_PROXY must be/);
    }
  });

  it('reads READS_PER_ACCOUNT (4) and QUERY_TIMEOUT_SECONDS (15, to the millisecond) of contract §8', () => {
    expect(loadAppConfig({})).toMatchObject({ readsPerAccount: 4, queryTimeoutSeconds: 15 });
    expect(loadAppConfig({ READS_PER_ACCOUNT: '9', QUERY_TIMEOUT_SECONDS: '0.25' })).toMatchObject({
      readsPerAccount: 9,
      queryTimeoutSeconds: 0.25,
    });
    expect(loadAppConfig({ QUERY_TIMEOUT_SECONDS: '3600' }).queryTimeoutSeconds).toBe(3600);
    for (const bad of ['0', '1.5', 'x'])
      expect(() => loadAppConfig({ READS_PER_ACCOUNT: bad })).toThrow(/READS_PER_ACCOUNT/);
    for (const bad of ['0', '0.0001', '3600.5', '-1', '1e3', ' 2', 'soon'])
      expect(() => loadAppConfig({ QUERY_TIMEOUT_SECONDS: bad })).toThrow(
        /QUERY_TIMEOUT_SECONDS must be a number of seconds from 0.001 to 3600/,
      );
  });

  it('reads SHUTDOWN_TIMEOUT_SECONDS: 25 by default, 2 to 3600', () => {
    expect(loadAppConfig({}).shutdownTimeoutSeconds).toBe(25);
    expect(loadAppConfig({ SHUTDOWN_TIMEOUT_SECONDS: '8' }).shutdownTimeoutSeconds).toBe(8);
    for (const bad of ['1', '3601', '2.5', 'soon'])
      expect(() => loadAppConfig({ SHUTDOWN_TIMEOUT_SECONDS: bad })).toThrow(
        /SHUTDOWN_TIMEOUT_SECONDS must be an integer from 2 to 3600/,
      );
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
      API_KEYS:
        'acme:acme-key-0123456789abcdef, globex:globex-key-0123456789abc:read,ops:ops-key-0123456789abcdefg:ingest+read',
    });
    expect(sut.bootstrapKeys).toEqual([
      { account: 'acme', key: 'acme-key-0123456789abcdef', scopes: ['ingest', 'read'] },
      { account: 'globex', key: 'globex-key-0123456789abc', scopes: ['read'] },
      { account: 'ops', key: 'ops-key-0123456789abcdefg', scopes: ['ingest', 'read'] },
    ]);
  });

  it('accepts the scopes admin and operator (operator for the account system)', () => {
    const sut = loadAppConfig({
      API_KEYS: 'acme:acme-admin-0123456789abcdef:admin+read,system:ops-key-0123456789abcdef:operator',
    });
    expect(sut.bootstrapKeys.map((k) => k.scopes)).toEqual([['admin', 'read'], ['operator']]);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [
      { DATABASE_URL: 'postgres://h1:5432,h2:5432/audit?target_session_attrs=standby' },
      /target_session_attrs must be any or read-write \(libpq's "standby" is not supported\)/,
    ],
    [{ DATABASE_URL: 'postgres://h1:5432,h2:99999/audit' }, /host 2 of DATABASE_URL: the port must be 1–65535/],
    [{ RATE_LIMIT_PER_SECOND: '-1' }, /RATE_LIMIT_PER_SECOND/],
    [{ AUTH_FAILURES_PER_MINUTE: 'many' }, /AUTH_FAILURES_PER_MINUTE/],
    [{ VERIFY_PAGE_SIZE: '0' }, /VERIFY_PAGE_SIZE/],
    [{ IDEMPOTENCY_RETENTION_HOURS: '23' }, /IDEMPOTENCY_RETENTION_HOURS/],
    [{ SIGNING_KEY_FILE: '/etc/audit-trail/' }, /SIGNING_KEY_FILE must be the path of a file/],
    [{ API_KEYS: 'acme:short' }, /API_KEYS entry 1/],
    [{ API_KEYS: 'acme:acme-key-0123456789abcdef:root' }, /API_KEYS entry 1/],
    [
      { API_KEYS: 'acme:acme-key-0123456789abcdef:operator' },
      /API_KEYS entry 1: the operator scope is only for .*'system'/,
    ],
    [{ API_KEYS: 'a b:acme-key-0123456789abcdef' }, /API_KEYS entry 1/],
  ])('fails fast with a readable message for %j', (env, message) => {
    expect(() => loadAppConfig(env)).toThrow(message);
  });

  it('refuses an API_KEYS secret shorter than 24 characters, naming the entry but never the secret', () => {
    const secret = 'acme-key-0123456789abcd'; // 23 characters
    let message = '';
    try {
      loadAppConfig({ API_KEYS: `globex:globex-key-0123456789abc,acme:${secret}:read` });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/API_KEYS entry 2 \(account acme\): the key must be at least 24 characters/);
    expect(message).not.toContain(secret);
    expect(message).not.toContain(secret.slice(0, 8));
    expect(loadAppConfig({ API_KEYS: `acme:${secret}x` }).bootstrapKeys).toHaveLength(1);
  });
});

describe('WITNESSES, WITNESS_QUORUM, WITNESS_INTERVAL_SECONDS, CHECKPOINT_LOG_ORIGIN', () => {
  // A cosignature/v1 key's shape: name, 8 hex digits, base64 of 0x04 and 32 bytes (the id is checked at start).
  const key = (name: string, byte = 1): string =>
    `${name}+0a1b2c3d+${Buffer.concat([Buffer.from([4]), Buffer.alloc(32, byte)]).toString('base64')}`;

  it('has the contract defaults', () => {
    expect(loadAppConfig({})).toMatchObject({
      witnesses: [],
      witnessQuorum: 0,
      witnessIntervalSeconds: 10,
      checkpointLogOrigin: 'audit-trail/checkpoint-log',
    });
  });

  it('reads <key>@<url> entries, the quorum defaulting to all of them', () => {
    const sut = loadAppConfig({
      WITNESSES: ` ${key('w.example/a')}@https://a.example/w/ , ${key('w@b', 2)}@http://127.0.0.1:7380`,
    });
    expect(sut.witnesses).toEqual([
      { key: key('w.example/a'), url: 'https://a.example/w' },
      { key: key('w@b', 2), url: 'http://127.0.0.1:7380' },
    ]);
    expect(sut.witnessQuorum).toBe(2);
    expect(loadAppConfig({ WITNESSES: `${key('a')}@http://a`, WITNESS_QUORUM: '1' }).witnessQuorum).toBe(1);
  });

  it.each([
    ['no url', key('a')],
    [
      'a signed-note key (type 0x01)',
      `a+0a1b2c3d+${Buffer.concat([Buffer.from([1]), Buffer.alloc(32)]).toString('base64')}@http://a`,
    ],
    ['a short key', `a+0a1b2c3d+BAAA@http://a`],
    ['another scheme', `${key('a')}@ftp://a`],
    ['a query', `${key('a')}@http://a/?x=1`],
    ['a key listed twice', `${key('a')}@http://a,${key('a')}@http://b`],
  ])('refuses %s with a clear message', (_label, value) => {
    expect(() => loadAppConfig({ WITNESSES: value })).toThrow(/WITNESSES entry [12]/);
  });

  it('holds the quorum to 1 … the number of witnesses', () => {
    expect(() => loadAppConfig({ WITNESSES: `${key('a')}@http://a`, WITNESS_QUORUM: '2' })).toThrow(/WITNESS_QUORUM/);
    expect(() => loadAppConfig({ WITNESSES: `${key('a')}@http://a`, WITNESS_QUORUM: '0' })).toThrow(/WITNESS_QUORUM/);
    expect(() => loadAppConfig({ WITNESS_INTERVAL_SECONDS: '0' })).toThrow(/WITNESS_INTERVAL_SECONDS/);
    expect(() => loadAppConfig({ CHECKPOINT_LOG_ORIGIN: '' })).toThrow(/CHECKPOINT_LOG_ORIGIN/);
    expect(loadAppConfig({ CHECKPOINT_LOG_ORIGIN: 'example.com/log' }).checkpointLogOrigin).toBe('example.com/log');
  });
});
