import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, MANAGE, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiConflict, ApiData, ApiErrors, ApiPage } from '../openapi/openapi-responses';
import { CreateKeyDto } from './dto/create-key.dto';
import { KeyView, NewKeyView } from './dto/key.view';
import { ListKeysQuery } from './dto/list-keys.query';
import { RotateKeyDto } from './dto/rotate-key.dto';
import { KeysApiService } from './keys-api.service';

/** An admin manages its own account's keys, an operator any account's (else 404); scopes: @RequireScopes(MANAGE). */
@ApiTags('keys')
@Controller('v1/accounts/:accountId/keys')
export class KeysController {
  constructor(private readonly keys: KeysApiService) {}

  @Get()
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'The account’s keys, oldest first, in pages (never their secrets)' })
  @ApiPage(KeyView)
  @ApiErrors(404)
  list(@CallerKey() key: AuthenticatedKey, @Param('accountId') accountId: string, @Query() query: ListKeysQuery) {
    return this.keys.list(key, accountId, query);
  }

  @Post()
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Create a key; its secret is in this answer only' })
  @ApiData(NewKeyView, 201, 'Created')
  @ApiErrors(404, 413, 415)
  create(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Body() body: CreateKeyDto,
    @Query() _query: NoQueryDto,
  ) {
    return this.keys.create(key, accountId, body);
  }

  @Delete(':keyId')
  @RequireScopes(MANAGE)
  @ApiOperation({
    summary: 'Revoke a key (again: unchanged); every instance refuses it within 5 s',
    description: 'Needs every scope the key has (else 403): an admin key never revokes an operator key.',
  })
  @ApiData(KeyView)
  @ApiErrors(404)
  @ApiConflict('a key cannot revoke itself as the account’s last admin key, nor anyone system’s last operator key')
  revoke(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('keyId') keyId: string,
    @Query() _query: NoQueryDto,
  ) {
    return this.keys.revoke(key, accountId, keyId);
  }

  @Post(':keyId/rotate')
  @RequireScopes(MANAGE)
  @ApiOperation({
    summary: 'A new key with the same name and scopes; the old one expires after the overlap',
    description: 'Needs every scope the key has (else 403).',
  })
  @ApiData(NewKeyView, 201, 'Created')
  @ApiErrors(404, 413, 415)
  @ApiConflict('the key is revoked or expired')
  rotate(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('keyId') keyId: string,
    @Body() body: RotateKeyDto,
    @Query() _query: NoQueryDto,
  ) {
    return this.keys.rotate(key, accountId, keyId, body);
  }
}
