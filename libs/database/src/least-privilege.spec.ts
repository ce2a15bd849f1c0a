import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { leastPrivilegeSql, scramSha256Verifier, setUpServiceRole, SqlSession } from './least-privilege';

const SCRIPT = readFileSync(join(__dirname, '../sql/least-privilege.sql'), 'utf8');

describe('leastPrivilegeSql', () => {
  it('replaces psql\'s :"service_role" and :"DBNAME" with quoted identifiers, as psql -v would', () => {
    const sql = leastPrivilegeSql(`GRANT CONNECT ON DATABASE :"DBNAME" TO :"service_role";`, {
      role: 'audit_service',
      database: 'odd"name',
    });
    expect(sql).toBe(`GRANT CONNECT ON DATABASE "odd""name" TO "audit_service";`);
  });

  it('refuses a variable it does not know rather than sending it to PostgreSQL', () => {
    expect(() => leastPrivilegeSql(`GRANT SELECT ON t TO :"someone"`, { role: 'r', database: 'd' })).toThrow(
      /unknown variable :"someone"/,
    );
  });

  it('leaves no variable in the shipped file and grants to the role only', () => {
    const sql = leastPrivilegeSql(SCRIPT, { role: 'svc', database: 'audit' });
    expect(sql).not.toMatch(/:"/);
    const grants = sql.split(';').filter((s) => /\bGRANT\b/.test(s.replace(/--.*$/gm, '')));
    expect(grants.length).toBeGreaterThan(5);
    for (const grant of grants) expect(grant).toMatch(/TO "svc"\s*$/);
    expect(sql.replace(/--.*$/gm, '')).not.toMatch(/\b(TRUNCATE|TRIGGER|REFERENCES|ALL PRIVILEGES|DELETE ON events)\b/);
  });
});

describe('scramSha256Verifier', () => {
  it('is the verifier PostgreSQL stores: SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey, salted anew each time', () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const verifier = scramSha256Verifier('pencil', salt);
    expect(verifier).toMatch(/^SCRAM-SHA-256\$4096:W22ZaJ0SNY7soEsUEjb6gQ==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$/);
    expect(scramSha256Verifier('pencil', salt)).toBe(verifier);
    expect(scramSha256Verifier('pencil')).not.toBe(scramSha256Verifier('pencil'));
    expect(verifier).not.toContain('pencil');
  });
});

describe('setUpServiceRole', () => {
  const session = (): SqlSession & { texts: string[] } => {
    const texts: string[] = [];
    return {
      texts,
      query: (text: string) => {
        texts.push(text);
        return Promise.resolve({ rows: [{ database: 'audit', present: false, n: 0 }] });
      },
    };
  };

  it('refuses a role name that would need quoting, and a short password, before touching the database', async () => {
    const s = session();
    await expect(
      setUpServiceRole(s, { role: 'Audit-Service', password: 'x'.repeat(20), script: SCRIPT }),
    ).rejects.toThrow(/name must match/);
    await expect(setUpServiceRole(s, { role: 'audit_service', password: 'short', script: SCRIPT })).rejects.toThrow(
      /16-256 printable/,
    );
    expect(s.texts).toEqual([]);
  });

  it('creates the role without sending its password, takes back every table privilege, grants the file, in one transaction', async () => {
    const s = session();
    const password = 'correct-horse-battery-staple';
    await setUpServiceRole(s, { role: 'audit_service', password, script: SCRIPT });
    expect(s.texts[0]).toBe('BEGIN');
    expect(s.texts.at(-1)).toBe('COMMIT');
    expect(s.texts.join('\n')).not.toContain(password);
    expect(s.texts.find((t) => t.startsWith('CREATE ROLE'))).toMatch(
      /^CREATE ROLE "audit_service" WITH LOGIN NOSUPERUSER .* PASSWORD 'SCRAM-SHA-256\$4096:/,
    );
    const revoke = s.texts.findIndex((t) => t.startsWith('REVOKE ALL ON ALL TABLES'));
    expect(revoke).toBeGreaterThan(0);
    expect(
      s.texts.findIndex((t) => t.includes('GRANT SELECT ON typeorm_migrations TO "audit_service"')),
    ).toBeGreaterThan(revoke);
  });
});
