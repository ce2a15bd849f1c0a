import { NoteVerifier, parseVerifierKey } from '@app/hashing';

/*
 * The witness's configuration, from the environment, checked before anything starts:
 *   WITNESS_NAME        its key name, a schema-less URL (e.g. witness.example.com/w1)      required
 *   WITNESS_KEY_FILE    its Ed25519 private key, PKCS#8 PEM (made, mode 0600, if missing)   .witness/key.pem
 *   WITNESS_STATE_FILE  what it cosigned, per origin (JSON, replaced atomically)            .witness/state.json
 *   WITNESS_LOGS        the logs it witnesses, JSON: [{ "origin": "…", "keys": ["<vkey>", …] }]  required to serve
 *   PORT, HOST          where it listens                                                     7380, 127.0.0.1
 * The log keys are signed-note verifier keys (type 0x01), as the service's checkpoints use.
 */

export interface WitnessedLog {
  origin: string;
  verifiers: NoteVerifier[];
}

export interface KeyConfig {
  name: string;
  keyFile: string;
}

export interface WitnessConfig extends KeyConfig {
  stateFile: string;
  logs: Map<string, WitnessedLog>;
  port: number;
  host: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

export function keyConfigFrom(env: Env): KeyConfig {
  const name = env.WITNESS_NAME?.trim() ?? '';
  if (name === '') throw new ConfigError('WITNESS_NAME is required: the witness key name, e.g. witness.example.com/w1');
  return { name, keyFile: env.WITNESS_KEY_FILE || '.witness/key.pem' };
}

export function witnessConfigFrom(env: Env): WitnessConfig {
  return {
    ...keyConfigFrom(env),
    stateFile: env.WITNESS_STATE_FILE || '.witness/state.json',
    logs: parseLogs(env.WITNESS_LOGS),
    port: parsePort(env.PORT),
    host: env.HOST || '127.0.0.1',
  };
}

const LOGS_FORMAT = 'WITNESS_LOGS is JSON: [{ "origin": "<checkpoint origin>", "keys": ["<verifier key>", …] }, …]';

export function parseLogs(text: string | undefined): Map<string, WitnessedLog> {
  if (!text?.trim()) throw new ConfigError(`${LOGS_FORMAT} (it is empty)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError(`${LOGS_FORMAT} (it is not JSON)`);
  }
  if (!Array.isArray(value) || value.length === 0) throw new ConfigError(`${LOGS_FORMAT} (not a non-empty array)`);
  const logs = new Map<string, WitnessedLog>();
  for (const entry of value as unknown[]) {
    const log = parseLog(entry);
    if (logs.has(log.origin)) throw new ConfigError(`WITNESS_LOGS lists the origin '${log.origin}' twice`);
    logs.set(log.origin, log);
  }
  return logs;
}

function parseLog(entry: unknown): WitnessedLog {
  const { origin, keys } = (entry ?? {}) as { origin?: unknown; keys?: unknown };
  if (typeof origin !== 'string' || origin === '' || /[\u0000-\u001f]/.test(origin))
    throw new ConfigError(`${LOGS_FORMAT} (an origin is missing or not one line)`);
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k): k is string => typeof k === 'string'))
    throw new ConfigError(`${LOGS_FORMAT} (the log '${origin}' has no keys)`);
  const verifiers = keys.map((key) => {
    try {
      return parseVerifierKey(key);
    } catch (error) {
      throw new ConfigError(`WITNESS_LOGS: a key of '${origin}': ${(error as Error).message}`);
    }
  });
  return { origin, verifiers };
}

function parsePort(text: string | undefined): number {
  if (text === undefined || text === '') return 7380;
  const port = Number(text);
  if (!/^[0-9]{1,5}$/.test(text) || port > 65535) throw new ConfigError(`PORT must be 0-65535, not '${text}'`);
  return port;
}
