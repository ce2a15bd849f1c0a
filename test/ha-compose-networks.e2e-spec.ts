import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docker/ha/docker-compose.yml's networks: the API's containers (and the one-shot migrate) reach
 * the database only through HAProxy, never etcd (no authentication: whoever writes its keys
 * rewrites Patroni's configuration) nor Patroni's REST API on the PostgreSQL nodes (a PATCH /config
 * of pg_hba to trust lets anyone log in as the superuser, who can change history without a record).
 * Whatever publishes a port publishes it on 127.0.0.1 only. Read from the file as it is written
 * (flow lists, `<<: *anchor` of a top-level `x-` block), no Docker needed.
 */
interface Service {
  networks: string[];
  ports: string[];
}

function readCompose(text: string): Map<string, Service> {
  const anchors = new Map<string, Service>();
  const services = new Map<string, Service>();
  let current: Service | null = null;
  let inServices = false;
  for (const line of text.split('\n')) {
    const top = /^([\w-]+):(?: &([\w-]+))?/.exec(line);
    if (top) {
      inServices = top[1] === 'services';
      current = top[2] ? { networks: [], ports: [] } : null;
      if (top[2]) anchors.set(top[2], current!);
      continue;
    }
    const service = /^ {2}([\w-]+):\s*$/.exec(line);
    if (inServices && service) {
      current = { networks: [], ports: [] };
      services.set(service[1]!, current);
      continue;
    }
    if (!current) continue;
    const merge = /^\s+<<: \*([\w-]+)/.exec(line);
    if (merge) {
      const base = anchors.get(merge[1]!);
      if (base) current.networks.push(...base.networks);
    }
    const list = /^\s+(networks|ports): \[(.*)\]/.exec(line);
    if (list) {
      const items = list[2]!.split(',').map((item) => item.trim().replace(/^"|"$/g, ''));
      if (list[1] === 'networks') current.networks = items;
      else current.ports = items;
    }
  }
  return services;
}

const compose = readCompose(readFileSync(join(__dirname, '..', 'docker', 'ha', 'docker-compose.yml'), 'utf8'));
const services = [...compose.entries()];
const networksOf = (name: string): string[] => compose.get(name)?.networks ?? [];

describe('docker/ha: who reaches etcd and Patroni', () => {
  const cluster = services.filter(([name]) => /^(etcd|pg)\d$/.test(name)).map(([name]) => name);
  const clients = services.filter(([name]) => /^(api\d|migrate)$/.test(name)).map(([name]) => name);

  it('has the etcd members, the PostgreSQL nodes and the clients it checks', () => {
    expect(cluster).toEqual(['etcd1', 'etcd2', 'etcd3', 'pg1', 'pg2', 'pg3']);
    expect(clients).toEqual(['migrate', 'api1', 'api2']);
  });

  it.each(['api1', 'api2', 'migrate'])('%s shares no network with etcd or a PostgreSQL node', (client) => {
    const shared = cluster.flatMap((node) =>
      networksOf(node)
        .filter((n) => networksOf(client).includes(n))
        .map((n) => `${node} on ${n}`),
    );
    expect(shared).toEqual([]);
  });

  it('publishes ports on 127.0.0.1 only', () => {
    const published = services.flatMap(([name, s]) => s.ports.map((p) => `${name} ${p}`));
    expect(published.length).toBeGreaterThan(0);
    expect(published.filter((p) => !/^\S+ 127\.0\.0\.1:/.test(p))).toEqual([]);
  });
});

describe('docker/ha: HAProxy’s stats page', () => {
  const config = readFileSync(join(__dirname, '..', 'docker', 'ha', 'haproxy.cfg'), 'utf8');
  const stats = /^listen stats\n((?:  .*\n)+)/m.exec(config)?.[1] ?? '';

  it('asks anyone but its own healthcheck for the password, which compose requires', () => {
    expect(stats).toContain('acl local src 127.0.0.1');
    expect(stats).toContain('stats http-request auth realm haproxy unless local || authorised');
    expect(config).toMatch(/^userlist stats_users\n  user admin insecure-password "\$\{HAPROXY_STATS_PASSWORD\}"$/m);
    const haproxy = readFileSync(join(__dirname, '..', 'docker', 'ha', 'docker-compose.yml'), 'utf8');
    expect(haproxy).toContain('HAPROXY_STATS_PASSWORD: ${HAPROXY_STATS_PASSWORD:?');
  });
});
