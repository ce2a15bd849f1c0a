import { Client } from 'pg';
import { choosesHost, DatabaseUrlError, parseDatabaseUrl } from './database-url';

describe('parseDatabaseUrl (DATABASE_URL as libpq writes it, docs/contract.md §21)', () => {
  it('reads every host in order, with its port or 5432, the user, password, database and parameters', () => {
    const url = parseDatabaseUrl(
      'postgres://audit:s3cret@h1.example:5433,10.0.0.2,[::1]:6432,[2001:db8::7]/audit?sslmode=require&target_session_attrs=read-write&application_name=x',
    );
    expect(url.hosts).toEqual([
      { host: 'h1.example', port: 5433 },
      { host: '10.0.0.2', port: 5432 },
      { host: '::1', port: 6432 },
      { host: '2001:db8::7', port: 5432 },
    ]);
    expect([url.user, url.password, url.database]).toEqual(['audit', 's3cret', 'audit']);
    expect(url.params).toEqual([
      ['sslmode', 'require'],
      ['application_name', 'x'],
    ]);
    expect(url.targetSessionAttrs).toBe('read-write');
    expect(choosesHost(url)).toBe(true);
  });

  it('decodes a percent-encoded user and password (an @, a colon, a slash) and keeps them encoded in each host’s URL', () => {
    const url = parseDatabaseUrl('postgresql://us%40er:p%3Aa%2Fss%40word@a:1,b:2/d%20b');
    expect([url.user, url.password, url.database]).toEqual(['us@er', 'p:a/ss@word', 'd b']);
    const one = url.urlFor(url.hosts[1]!);
    expect(one).toBe('postgresql://us%40er:p%3Aa%2Fss%40word@b:2/d%20b');
    // pg reads that URL as the same user, password and database, on that host.
    const client = new Client({ connectionString: one });
    expect([client.user, client.password, client.database, client.host, client.port]).toEqual([
      'us@er',
      'p:a/ss@word',
      'd b',
      'b',
      2,
    ]);
  });

  it('writes an IPv6 host in brackets and drops target_session_attrs from each host’s URL', () => {
    const url = parseDatabaseUrl(
      'postgres://u@[::1]:5432,127.0.0.1/audit?target_session_attrs=read-write&sslmode=disable',
    );
    expect(url.urlFor(url.hosts[0]!)).toBe('postgres://u@[::1]:5432/audit?sslmode=disable');
    expect(url.urlFor(url.hosts[1]!)).toBe('postgres://u@127.0.0.1:5432/audit?sslmode=disable');
    expect(new Client({ connectionString: url.urlFor(url.hosts[0]!) }).host).toBe('::1');
  });

  it('leaves a one-host URL without target_session_attrs to pg as it is', () => {
    const url = parseDatabaseUrl('postgres://postgres@127.0.0.1:5432/postgres');
    expect(url.hosts).toEqual([{ host: '127.0.0.1', port: 5432 }]);
    expect(url.targetSessionAttrs).toBe('any');
    expect(choosesHost(url)).toBe(false);
    expect(choosesHost(parseDatabaseUrl('postgres://u@h1,h2/db?target_session_attrs=any'))).toBe(true);
    // The embedded database's URL: a socket folder as a parameter.
    expect(choosesHost(parseDatabaseUrl('postgres://postgres@localhost:5432/postgres?host=%2Ftmp%2Fx'))).toBe(false);
    expect(parseDatabaseUrl('postgres:///audit').hosts).toEqual([]);
  });

  it.each([
    [
      'postgres://h1,h2/db?target_session_attrs=standby',
      /target_session_attrs must be any or read-write \(libpq's "standby" is not supported\)/,
    ],
    ['postgres://h1,h2/db?target_session_attrs=prefer-standby', /"prefer-standby" is not supported/],
    ['postgres://h1,h2/db?target_session_attrs=writable', /"writable" is not a libpq value/],
    ['postgres://h1,,h2/db', /host 2 of DATABASE_URL must be host, host:port or \[IPv6\]:port/],
    ['postgres://h1:0,h2/db', /host 1 of DATABASE_URL: the port must be 1–65535/],
    ['postgres://h1:5432x/db', /host 1 of DATABASE_URL must be/],
    ['postgres://[::1/db', /host 1 of DATABASE_URL must be/],
    ['postgres://u:%zz@h1,h2/db', /the password has a malformed percent-encoding/],
    ['postgres:///db?target_session_attrs=read-write', /needs the hosts written in the URL/],
    ['mysql://h1/db', /must be a postgres:\/\/ URL/],
  ])('refuses %s, naming the problem', (written, message) => {
    expect(() => parseDatabaseUrl(written)).toThrow(DatabaseUrlError);
    expect(() => parseDatabaseUrl(written)).toThrow(message);
  });

  it('never puts the password in a refusal', () => {
    let message = '';
    try {
      parseDatabaseUrl('postgres://u:hunter2@h1:70000,h2/db');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/port must be/);
    expect(message).not.toContain('hunter2');
  });
});
