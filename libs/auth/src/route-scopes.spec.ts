import { Controller, Delete, Get, Post } from '@nestjs/common';
import { Public } from './decorators';
import { AnyKey, MANAGE, OPERATOR, READ, RequireScopes, routeScopesOf, scopesAllow } from './route-scopes';

@Controller('v1/things')
class ThingsController {
  @Get()
  @RequireScopes(READ)
  list(): void {}

  @Post(':thingId/archive')
  @RequireScopes(OPERATOR)
  archive(): void {}

  @Delete(':thingId')
  remove(): void {}

  @Get('mine')
  @AnyKey()
  mine(): void {}

  @Public()
  @Get('public')
  open(): void {}

  helper(): void {}
}

@Controller('v1/more-things')
class MoreThingsController extends ThingsController {
  @Post()
  @RequireScopes(MANAGE)
  create(): void {}
}

describe('routeScopesOf', () => {
  it('lists every handler that needs a key by METHOD /path, with what it declares (undefined: nothing)', () => {
    expect(Object.fromEntries(routeScopesOf([ThingsController]))).toEqual({
      'GET /v1/things': READ,
      'POST /v1/things/:thingId/archive': OPERATOR,
      'DELETE /v1/things/:thingId': undefined,
      'GET /v1/things/mine': 'any',
    });
  });

  it('includes inherited handlers under the subclass path', () => {
    expect([...routeScopesOf([MoreThingsController]).keys()].sort()).toEqual([
      'DELETE /v1/more-things/:thingId',
      'GET /v1/more-things',
      'GET /v1/more-things/mine',
      'POST /v1/more-things',
      'POST /v1/more-things/:thingId/archive',
    ]);
  });

  it('refuses to declare no scope at all', () => {
    expect(() => RequireScopes([])).toThrow(/at least one scope/);
  });
});

describe('scopesAllow', () => {
  it('allows one of the declared scopes, any key for any, nothing for an undeclared route', () => {
    expect(scopesAllow(READ, ['operator'])).toBe(true);
    expect(scopesAllow(READ, ['ingest', 'admin'])).toBe(false);
    expect(scopesAllow('any', [])).toBe(true);
    expect(scopesAllow(undefined, ['ingest', 'read', 'admin', 'operator'])).toBe(false);
  });
});
