/**
 * DATABASE_URL as libpq writes it (docs/contract.md §21): `postgres://user:pass@h1:5432,h2:5432/audit?
 * target_session_attrs=read-write`. pg reads one host only (a list is `TypeError: Invalid URL` there),
 * so the service reads the list itself and gives pg the URL of one host at a time
 * (libs/database/src/host-choice.ts). Plain, dependency-free: the verification workers load it too.
 */

/** libpq's target_session_attrs values this service honours; the others are refused at start. */
export const TARGET_SESSION_ATTRS = ['any', 'read-write'] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

/** libpq's other values: named in the refusal, so that an operator sees they exist and are not supported. */
const UNSUPPORTED_SESSION_ATTRS = ['read-only', 'primary', 'standby', 'prefer-standby'];

/** libpq's default port, for a host written without one. */
export const DEFAULT_PORT = 5432;

export interface DatabaseHost {
  /** A name, an IPv4 address, or an IPv6 address without its brackets. */
  host: string;
  port: number;
}

export interface DatabaseUrl {
  /** In the order written: tried in that order. Empty when the URL names none (pg's defaults apply). */
  hosts: DatabaseHost[];
  /** Percent-decoded; null when absent. */
  user: string | null;
  password: string | null;
  database: string | null;
  /** The query's parameters, decoded, in order, without target_session_attrs. */
  params: [string, string][];
  targetSessionAttrs: TargetSessionAttrs;
  /** The URL of one host as pg reads it: this URL's user, password, database and parameters, written as they were. */
  urlFor(host: DatabaseHost): string;
}

/** A DATABASE_URL this service cannot use. The message never holds the password. */
export class DatabaseUrlError extends Error {}

const URL_SHAPE = /^(postgres(?:ql)?):\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/;

/** Parses `url`, the value of `variable` (throws DatabaseUrlError naming what is wrong). */
export function parseDatabaseUrl(url: string, variable = 'DATABASE_URL'): DatabaseUrl {
  const shape = URL_SHAPE.exec(url);
  if (!shape)
    throw new DatabaseUrlError(`${variable} must be a postgres:// URL (postgres://user:password@host:port/database)`);
  const [, scheme, authority = '', path = '', query = ''] = shape;
  // The last '@' ends the user and password (an '@' inside them should be %40; libpq reads it so too).
  const at = authority.lastIndexOf('@');
  const userInfo = at < 0 ? null : authority.slice(0, at);
  const hostList = authority.slice(at + 1);
  const colon = userInfo === null ? -1 : userInfo.indexOf(':');
  const user =
    userInfo === null ? null : decode(colon < 0 ? userInfo : userInfo.slice(0, colon), 'the user name', variable);
  const password = userInfo === null || colon < 0 ? null : decode(userInfo.slice(colon + 1), 'the password', variable);
  const hosts = hostList === '' ? [] : hostList.split(',').map((written, i) => parseHost(written, i, variable));
  const database = path.length > 1 ? decode(path.slice(1), 'the database name', variable) : null;

  const kept: string[] = [];
  const params: [string, string][] = [];
  let targetSessionAttrs: TargetSessionAttrs = 'any';
  for (const pair of query.slice(1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq < 0 ? pair : pair.slice(0, eq), 'a parameter name', variable);
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1), `the parameter ${name}`, variable);
    if (name !== 'target_session_attrs') {
      kept.push(pair);
      params.push([name, value]);
    } else if ((TARGET_SESSION_ATTRS as readonly string[]).includes(value)) {
      targetSessionAttrs = value as TargetSessionAttrs;
    } else {
      const known = UNSUPPORTED_SESSION_ATTRS.includes(value)
        ? `libpq's ${JSON.stringify(value)} is not supported`
        : `${JSON.stringify(value)} is not a libpq value`;
      throw new DatabaseUrlError(
        `${variable}: target_session_attrs must be ${TARGET_SESSION_ATTRS.join(' or ')} (${known})`,
      );
    }
  }
  if (hosts.length === 0 && targetSessionAttrs !== 'any')
    throw new DatabaseUrlError(`${variable}: target_session_attrs needs the hosts written in the URL`);
  const rest = `${path}${kept.length > 0 ? `?${kept.join('&')}` : ''}`;
  const prefix = `${scheme}://${userInfo === null ? '' : `${userInfo}@`}`;
  return {
    hosts,
    user,
    password,
    database,
    params,
    targetSessionAttrs,
    urlFor: ({ host, port }) =>
      `${prefix}${host.includes(':') ? `[${host}]` : encodeURIComponent(host)}:${port}${rest}`,
  };
}

/** Whether pg cannot be given `url` as it is: several hosts, or a session that must accept writes. */
export function choosesHost(url: DatabaseUrl): boolean {
  return url.hosts.length > 1 || url.targetSessionAttrs !== 'any';
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` (percent-decoded; the port 5432 when not written). */
function parseHost(written: string, index: number, variable: string): DatabaseHost {
  const which = `host ${index + 1} of ${variable}`;
  const shape = /^(?:\[([0-9A-Fa-f:.]+(?:%25[^\]]+)?)\]|([^:[\]]+))(?::(\d*))?$/.exec(written);
  if (!shape) throw new DatabaseUrlError(`${which} must be host, host:port or [IPv6]:port`);
  const [, v6, name, port] = shape;
  const number = port === undefined || port === '' ? DEFAULT_PORT : Number(port);
  if (!Number.isInteger(number) || number < 1 || number > 65535)
    throw new DatabaseUrlError(`${which}: the port must be 1–65535`);
  return { host: v6 !== undefined ? decode(v6, which, variable) : decode(name!, which, variable), port: number };
}

function decode(text: string, what: string, variable: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new DatabaseUrlError(`${variable}: ${what} has a malformed percent-encoding`);
  }
}
