import { Client, ClientConfig } from 'pg';
// Relative and the file itself: ormconfig.ts loads this without the path aliases, the verification workers without Nest.
import { DatabaseHost, DatabaseUrl } from '../../common/src/config/database-url';

/**
 * No host of DATABASE_URL gave a session of the kind asked for. SQLSTATE 08001 (unable to establish
 * a connection): the exception filter answers 503 + Retry-After, as for any unreachable database.
 */
export class NoUsableHostError extends Error {
  readonly code = '08001';
}

/** libpq's test for target_session_attrs=read-write: the session's transactions may write. */
async function acceptsWrites(client: Client): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  return rows[0]?.transaction_read_only === 'off';
}

const named = ({ host, port }: DatabaseHost): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The session `client` (just connected) must be, or why not (it is then ended). */
async function refusal(client: Client, url: DatabaseUrl): Promise<string | null> {
  if (url.targetSessionAttrs !== 'read-write' || (await acceptsWrites(client))) return null;
  await client.end().catch(() => undefined);
  return 'read-only';
}

/**
 * Connects to every host of `url` at once and keeps the first in the written order that gives a
 * session of the kind asked for (libpq's order: a later host is used only when every earlier one
 * failed), ending the others. At once, so that a host that does not answer costs one connect
 * timeout, not one per host before it: what a failover's first connections wait for.
 */
export async function connectFirstUsable(
  url: DatabaseUrl,
  config: ClientConfig,
): Promise<{ client: Client; host: DatabaseHost }> {
  const attempts = url.hosts.map(async (host) => {
    const client = new Client({ ...config, connectionString: url.urlFor(host) });
    // A connection that breaks after the choice is the user's to handle; before, its error is the attempt's.
    client.on('error', () => undefined);
    try {
      await client.connect();
      const refused = await refusal(client, url);
      return refused === null ? { client, host } : `${named(host)}: ${refused}`;
    } catch (error) {
      await client.end().catch(() => undefined);
      return `${named(host)}: ${reason(error)}`;
    }
  });
  const failures: string[] = [];
  for (const [i, attempt] of attempts.entries()) {
    const outcome = await attempt;
    if (typeof outcome === 'string') {
      failures.push(outcome);
      continue;
    }
    for (const later of attempts.slice(i + 1))
      void later.then((other) => (typeof other === 'string' ? undefined : other.client.end().catch(() => undefined)));
    return outcome;
  }
  throw new NoUsableHostError(
    `No host of DATABASE_URL gave a ${url.targetSessionAttrs === 'read-write' ? 'writable' : 'working'} session (${failures.join('; ')})`,
  );
}

/**
 * The pool's connection class for a DATABASE_URL pg cannot read (several hosts, or
 * target_session_attrs=read-write; docs/contract.md §21). Each new connection goes to the host the
 * previous one was opened on, checked as libpq checks it; when there is none yet, or that one
 * failed or refused writes (a failover), every host is tried (connectFirstUsable) and the connection
 * opened on the one chosen. A connection that fails on the remembered host fails (503 + Retry-After
 * for its request: a pg Client connects once) and the next one chooses again.
 */
export function hostChoosingClient(url: DatabaseUrl): new (config: ClientConfig) => Client {
  let serving: DatabaseHost | null = null;
  return class HostChoosingClient extends Client {
    private readonly settings: ClientConfig;

    constructor(config: ClientConfig) {
      super(config);
      this.settings = config;
    }

    override connect(): Promise<Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: Client) => void)): Promise<Client> | void {
      const opening = this.openChosen();
      if (!callback) return opening;
      opening.then(
        (client) => (callback as (err: null, c: Client) => void)(null, client),
        (error: Error) => (callback as (err: Error) => void)(error),
      );
    }

    private async openChosen(): Promise<Client> {
      let host = serving;
      if (host === null) {
        const probe = await connectFirstUsable(url, this.settings);
        host = probe.host;
        await probe.client.end().catch(() => undefined);
      }
      this.host = host.host;
      this.port = host.port;
      try {
        await super.connect();
        const refused = await refusal(this, url);
        if (refused !== null) throw new NoUsableHostError(`${named(host)} of DATABASE_URL is ${refused} now`);
      } catch (error) {
        if (serving === host) serving = null;
        throw error;
      }
      serving = host;
      return this;
    }
  };
}
