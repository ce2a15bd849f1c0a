import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PGlite (PostgreSQL compiled to WASM) on DATA_DIR, served on a loopback port so the ordinary
 * `pg` driver and TypeORM's postgres driver reach it: one dialect, one set of migrations.
 *
 * PGlite is a single session. pglite-socket can multiplex several connections, but it keeps a
 * transaction exclusive only once PGlite reports one open, so messages of two connections'
 * extended-protocol queries can interleave. We therefore accept exactly one connection and
 * the app uses a pool of one: every transaction then runs alone, which is what isolation needs.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    readonly url: string,
  ) {}

  static async start(dataDir: string): Promise<EmbeddedPostgres> {
    mkdirSync(dataDir, { recursive: true });
    const db = await PGlite.create({ dataDir: `${dataDir}/pglite` });
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await server.start();
    const { port } = server.getServerConn().match(/:(?<port>\d+)$/)?.groups ?? {};
    return new EmbeddedPostgres(db, server, `postgres://postgres@127.0.0.1:${port}/postgres`);
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
  }
}
