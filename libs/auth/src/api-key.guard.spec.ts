import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Request, Response } from 'express';
import { AppConfig, AppError } from '@app/common';
import { digestApiKey, digestsEqual, generateApiKey } from './api-key';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { authenticateRequests } from './authentication.middleware';
import { IS_PUBLIC, REQUIRED_SCOPE } from './decorators';
import { KeyAuthenticator } from './key-authenticator';

/** The real middleware, authenticator and guard; only the key lookup (a database read) is in memory. */
describe('ApiKeyGuard', () => {
  const validKey = generateApiKey();
  const readOnlyKey = generateApiKey();
  let sut: ApiKeyGuard;
  let authenticator: KeyAuthenticator;

  beforeAll(async () => {
    const keys = new Map([
      [digestApiKey(validKey), { keyId: 'key_1', accountId: 'acc_1', scopes: ['ingest', 'read'] as const }],
      [digestApiKey(readOnlyKey), { keyId: 'key_2', accountId: 'acc_1', scopes: ['read'] as const }],
    ]);
    const moduleRef = await Test.createTestingModule({
      providers: [
        ApiKeyGuard,
        KeyAuthenticator,
        AuthFailureLimiter,
        Reflector,
        { provide: AppConfig, useValue: new AppConfig() },
        {
          provide: ApiKeyStore,
          useValue: {
            cached: () => undefined,
            authenticate: async (k: string) => keys.get(digestApiKey(k)) ?? null,
          },
        },
      ],
    }).compile();
    sut = moduleRef.get(ApiKeyGuard);
    authenticator = moduleRef.get(KeyAuthenticator);
  });

  async function contextFor(authorization: string | undefined, metadata: Record<string, unknown> = {}) {
    const request = { headers: authorization ? { authorization } : {}, ip: '127.0.0.1' } as unknown as Request & {
      user?: unknown;
    };
    await new Promise<void>((resolve, reject) =>
      authenticateRequests(authenticator)(request, {} as Response, (error?: unknown) =>
        error ? reject(error as Error) : resolve(),
      ),
    );
    const handler = () => undefined;
    for (const [key, value] of Object.entries(metadata)) Reflect.defineMetadata(key, value, handler);
    const context = {
      getHandler: () => handler,
      getClass: () => class {},
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
      getType: () => 'http',
      getArgs: () => [request, {}],
    } as unknown as ExecutionContext;
    return { context, request };
  }

  function failure(run: () => unknown): AppError {
    try {
      run();
    } catch (error) {
      return error as AppError;
    }
    throw new Error('expected the guard to refuse');
  }

  it("attaches the key's account for a valid bearer key", async () => {
    const { context, request } = await contextFor(`Bearer ${validKey}`);
    expect(sut.canActivate(context)).toBe(true);
    expect(request.user).toEqual({ keyId: 'key_1', accountId: 'acc_1', scopes: ['ingest', 'read'] });
  });

  it.each([
    ['no header', undefined],
    ['an unknown key', `Bearer ${generateApiKey()}`],
    ['the Basic scheme', `Basic ${validKey}`],
    ['a bare key', validKey],
  ])('refuses %s with UNAUTHORIZED and WWW-Authenticate: Bearer', async (_name, header) => {
    const { context } = await contextFor(header);
    const error = failure(() => sut.canActivate(context));
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
  });

  it("refuses a key without the route's scope with FORBIDDEN; read is the default scope", async () => {
    const { context } = await contextFor(`Bearer ${readOnlyKey}`, { [REQUIRED_SCOPE]: 'ingest' });
    expect(failure(() => sut.canActivate(context)).code).toBe('FORBIDDEN');
    expect(sut.canActivate((await contextFor(`Bearer ${readOnlyKey}`)).context)).toBe(true);
  });

  it('lets @Public() routes through without a key', async () => {
    expect(sut.canActivate((await contextFor(undefined, { [IS_PUBLIC]: true })).context)).toBe(true);
  });
});

describe('api key digests', () => {
  it('issues 256-bit keys and stores only a SHA-256 digest', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^ats_[A-Za-z0-9_-]{43}$/);
    expect(digestApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestApiKey(key)).not.toContain(key.slice(4, 12));
  });

  it('compares digests in constant time and only equal ones match', () => {
    const digest = digestApiKey('a');
    expect(digestsEqual(digest, digestApiKey('a'))).toBe(true);
    expect(digestsEqual(digest, digestApiKey('b'))).toBe(false);
    expect(digestsEqual(digest, digest.slice(0, 10))).toBe(false);
  });
});
