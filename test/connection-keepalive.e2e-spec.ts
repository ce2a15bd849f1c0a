import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@app/database';
import { ADMIN_URL } from './support/postgres';
import { usingPostgres } from './support/test-app';

/** USER_HZ: the unit of /proc/net/tcp's timer column (clock ticks, 100 a second on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * The kernel's timer on the TCP socket with local port `port`, from /proc/net/tcp{,6} (present in
 * the Docker image too, unlike `ss`): `tr` 2 is the keepalive timer, `tm->when` its ticks to expiry.
 */
function socketTimer(port: number): { kind: number; seconds: number } | null {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (!fields[1]?.endsWith(local)) continue;
      const [kind, when] = fields[5]!.split(':');
      return { kind: parseInt(kind!, 16), seconds: parseInt(when!, 16) / TICKS_PER_SECOND };
    }
  }
  return null;
}

/**
 * CONNECTION_SETTINGS (libs/database/src/connection-settings.ts): the pool's connections probe a
 * silent peer with TCP keepalive. Read from the kernel, not from our own options: a setting pg
 * ignored would fail here.
 */
(usingPostgres() ? describe : describe.skip)('connections to PostgreSQL', () => {
  it('have TCP keepalive on, its first probe after at most 10 s of silence', async () => {
    const dataSource = await new DataSource(dataSourceOptions({ url: ADMIN_URL, poolSize: 1 })).initialize();
    try {
      const [row] = await dataSource.query<{ port: number }[]>('SELECT inet_client_port() AS port');
      const timer = socketTimer(row!.port);
      expect(timer).toMatchObject({ kind: 2 });
      expect(timer!.seconds).toBeLessThanOrEqual(10);
    } finally {
      await dataSource.destroy();
    }
  });
});
