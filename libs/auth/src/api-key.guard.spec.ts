import { ExecutionContext, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { AppConfig, AppError, Metrics } from '@app/common';
import { digestApiKey, digestsEqual, generateApiKey } from './api-key';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ApiKeyStrategy } from './api-key.strategy';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { Public } from './decorators';
import { KeyAuthenticator } from './key-authenticator';
import { KeyUsage } from './key-usage';
import { AnyKey, INGEST, READ, RequireScopes } from './route-scopes';

/** Handlers as controllers declare them, with the real decorators. */
class Routes {
  @RequireScopes(READ)
  read(this: void): void {}
  @RequireScopes(INGEST)
  append(this: void): void {}
  @AnyKey()
  me(this: void): void {}
  undeclared(this: void): void {}
  @Public()
  open(this: void): void {}
}

/** The real guard, passport strategy and authenticator; only the key lookup (a database read) is in memory. */
describe('ApiKeyGuard', () => {
  const validKey = generateApiKey();
  const readOnlyKey = generateApiKey();
  const unreachableKey = generateApiKey();
  let sut: ApiKeyGuard;

  beforeAll(async () => {
    const keys = new Map([
      [digestApiKey(validKey), { keyId: 'key_1', accountId: 'acc_1', scopes: ['ingest', 'read'] as const }],
      [digestApiKey(readOnlyKey), { keyId: 'key_2', accountId: 'acc_1', scopes: ['read'] as const }],
    ]);
    const moduleRef = await Test.createTestingModule({
      providers: [
        ApiKeyGuard,
        ApiKeyStrategy,
        KeyAuthenticator,
        AuthFailureLimiter,
        Reflector,
        Metrics,
        { provide: AppConfig, useValue: new AppConfig() },
        { provide: KeyUsage, useValue: { noteUse: () => undefined } },
        {
          provide: ApiKeyStore,
          useValue: {
            cached: () => undefined,
            mayBeValid: () => false,
            lookUp: (digest: string) => {
              if (digest === digestApiKey(unreachableKey)) {
                return Promise.reject(new Error('timeout exceeded when trying to connect'));
              }
              return Promise.resolve(keys.get(digest) ?? null);
            },
          },
        },
      ],
    }).compile();
    sut = moduleRef.get(ApiKeyGuard);
  });

  function contextFor(
    authorization: string | undefined,
    route: keyof Routes = 'read',
    elsewhere: { query?: object; body?: object } = {},
  ) {
    const request = { headers: authorization ? { authorization } : {}, ip: '127.0.0.1', ...elsewhere } as {
      user?: unknown;
    };
    const context = {
      getHandler: () => Routes.prototype[route],
      getClass: () => Routes,
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
      getType: () => 'http',
      getArgs: () => [request, {}],
    } as unknown as ExecutionContext;
    return { context, request };
  }

  async function failure(run: () => Promise<unknown>): Promise<AppError> {
    try {
      await run();
    } catch (error) {
      return error as AppError;
    }
    throw new Error('expected the guard to refuse');
  }

  it("attaches the key's account for a valid bearer key", async () => {
    const { context, request } = contextFor(`Bearer ${validKey}`);
    expect(await sut.canActivate(context)).toBe(true);
    expect(request.user).toEqual({ keyId: 'key_1', accountId: 'acc_1', scopes: ['ingest', 'read'] });
  });

  it.each([
    ['no header', undefined],
    ['an unknown key', `Bearer ${generateApiKey()}`],
    ['the Basic scheme', `Basic ${validKey}`],
    ['a bare key', validKey],
  ])('refuses %s with UNAUTHORIZED and WWW-Authenticate: Bearer', async (_name, header) => {
    const { context } = contextFor(header);
    const error = await failure(() => sut.canActivate(context));
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
  });

  it('refuses a key without a scope the handler declares (@RequireScopes) with FORBIDDEN', async () => {
    const error = await failure(() => sut.canActivate(contextFor(`Bearer ${readOnlyKey}`, 'append').context));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.details).toEqual({ requiredScopes: ['ingest'] });
    expect(await sut.canActivate(contextFor(`Bearer ${readOnlyKey}`, 'read').context)).toBe(true);
  });

  it('lets any valid key call an @AnyKey() handler, but not without one', async () => {
    expect(await sut.canActivate(contextFor(`Bearer ${readOnlyKey}`, 'me').context)).toBe(true);
    expect((await failure(() => sut.canActivate(contextFor(undefined, 'me').context))).code).toBe('UNAUTHORIZED');
  });

  it('refuses every key on a handler that declares no scopes (deny by default)', async () => {
    const undeclared = contextFor(`Bearer ${validKey}`, 'undeclared');
    expect((await failure(() => sut.canActivate(undeclared.context))).code).toBe('FORBIDDEN');
  });

  it('lets @Public() routes through without a key', async () => {
    expect(await sut.canActivate(contextFor(undefined, 'open').context)).toBe(true);
  });

  it('reads the key from the Authorization header only, never access_token in the query string or body', async () => {
    const { context } = contextFor(undefined, 'read', {
      query: { access_token: validKey },
      body: { access_token: validKey },
    });
    expect((await failure(() => sut.canActivate(context))).code).toBe('UNAUTHORIZED');
  });

  it('answers SERVICE_UNAVAILABLE + Retry-After, not UNAUTHORIZED, when the key cannot be looked up', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const error = await failure(() => sut.canActivate(contextFor(`Bearer ${unreachableKey}`).context));
    expect(logged).toHaveBeenCalledWith(expect.stringMatching(/API keys cannot be looked up/));
    logged.mockRestore();
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.headers).toEqual({ 'Retry-After': '1' });
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
