import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication, Type } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppConfig, loadAppConfig } from '@app/common';
import { AppModule } from '../../apps/api/src/app.module';
import { configureApp } from '../../apps/api/src/app.setup';
import { JsonReplyAdapter } from '../../apps/api/src/common/json-reply.adapter';
import { openApiDocument } from '../../apps/api/src/openapi/openapi';
import { OpenApiCheck } from './openapi-check';
import { databaseUrl, EMBEDDED_TEMPLATE_ENV, PGLITE_FOLDER, RUN_PREFIX_ENV, withAdmin } from './postgres';

/** Keys every test app knows: two accounts, and scoped keys of the first. */
export const KEYS = {
  acme: 'acme-key-0123456789abcdef',
  acmeIngestOnly: 'acme-ingest-0123456789abcdef',
  acmeReadOnly: 'acme-read-0123456789abcdef',
  globex: 'globex-key-0123456789abcdef',
} as const;

const API_KEYS = [
  `acme:${KEYS.acme}`,
  `acme:${KEYS.acmeIngestOnly}:ingest`,
  `acme:${KEYS.acmeReadOnly}:read`,
  `globex:${KEYS.globex}`,
].join(',');

export const usingPostgres = (): boolean => process.env.E2E_MODE === 'postgres';

/**
 * A fresh database for one suite: a new PostgreSQL database, or a new embedded data directory
 * (a copy of the run's migrated template, when global-setup made one).
 */
export async function freshDatabase(): Promise<{ url: string | null; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'audit-e2e-'));
  if (!usingPostgres()) {
    const template = process.env[EMBEDDED_TEMPLATE_ENV];
    if (template) cpSync(join(template, PGLITE_FOLDER), join(dataDir, PGLITE_FOLDER), { recursive: true });
    return { url: null, dataDir };
  }
  const name = `${process.env[RUN_PREFIX_ENV] ?? 'audit_test'}_${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}"`));
  return { url: databaseUrl(name), dataDir };
}

export interface TestApp {
  app: INestApplication;
  http: () => ReturnType<typeof request>;
  dataSource: DataSource;
  config: AppConfig;
  close: () => Promise<void>;
}

/** The real AppModule (or a module built from its parts), configured exactly as main.ts does, on the given (or a fresh) database. */
export async function startTestApp(
  overrides: Partial<AppConfig> = {},
  database?: { url: string | null; dataDir: string },
  rootModule: Type = AppModule,
  /** Replaces providers, e.g. LOG_DESTINATION to capture the log lines. */
  configure: (builder: TestingModuleBuilder) => TestingModuleBuilder = (builder) => builder,
): Promise<TestApp> {
  const db = database ?? (await freshDatabase());
  const config = Object.assign(loadAppConfig({ API_KEYS, RATE_LIMIT_PER_SECOND: '0' }), {
    databaseUrl: db.url,
    dataDir: db.dataDir,
    // Quiet tests, and no listener on a fixed port: a suite that checks logs or metrics asks for them.
    logLevel: 'silent',
    metricsPort: 0,
    ...overrides,
  });
  const moduleRef = await configure(
    Test.createTestingModule({ imports: [rootModule] })
      .overrideProvider(AppConfig)
      .useValue(config),
  ).compile();
  const app = moduleRef.createNestApplication(new JsonReplyAdapter(), { bodyParser: false, logger: ['error', 'warn'] });
  configureApp(app);
  await app.init();
  const server = app.getHttpServer();
  const description = new OpenApiCheck(openApiDocument(app));
  return {
    app,
    http: () => checkedAgainst(description, request(server)),
    dataSource: app.get(DataSource),
    config,
    close: async () => {
      await app.close();
      if (!database) rmSync(db.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Every request a suite makes through `http()` gets one more expectation: the response is one
 * the OpenAPI description lists (status, Content-Type, body, headers). It runs before the test's
 * own, and a mismatch fails the request like a failed `.expect()`.
 */
export function checkedAgainst(
  description: OpenApiCheck,
  agent: ReturnType<typeof request>,
): ReturnType<typeof request> {
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(test instanceof request.Test)) return test;
        return test.expect((res: request.Response) => description.check(test.method, test.url, res));
      };
    },
  });
}

export const bearer = (key: string): [string, string] => ['Authorization', `Bearer ${key}`];

/**
 * The JSON export of every event of `key`'s account up to now (of one chain with `chainId`), as
 * the text the service sent: what the CLI's verify-export reads.
 */
export async function exportJsonText(t: TestApp, key: string, chainId?: string): Promise<string> {
  const res = await t
    .http()
    .get('/v1/events/export')
    .query({
      format: 'json',
      after: '2000-01-01T00:00:00.000Z',
      before: new Date(Date.now() + 60_000).toISOString(),
      ...(chainId === undefined ? {} : { chain_id: chainId }),
    })
    .set(...bearer(key))
    .buffer(true)
    .parse((response, callback) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      response.on('end', () => callback(null, text));
    })
    .expect(200);
  return res.body as string;
}
