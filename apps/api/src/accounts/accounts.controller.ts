import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnyKey, AuthenticatedKey, CallerKey, MANAGE, OPERATOR, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiConflict, ApiData, ApiErrors, ApiPage } from '../openapi/openapi-responses';
import { AccountsService } from './accounts.service';
import { AccountView } from './dto/account.view';
import { CreateAccountDto } from './dto/create-account.dto';
import { ListAccountsQuery } from './dto/list-accounts.query';
import { MeView } from './dto/me.view';

/** Scopes: each handler's @RequireScopes or @AnyKey (libs/auth); tenancy: AccountsService. */
@ApiTags('accounts')
@Controller('v1')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Get('me')
  @AnyKey()
  @ApiOperation({ summary: 'Who this key is: its account, id and scopes (any valid key)' })
  @ApiData(MeView)
  me(@CallerKey() key: AuthenticatedKey, @Query() _query: NoQueryDto) {
    return this.accounts.me(key);
  }

  @Get('accounts')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Accounts: every one for an operator (oldest first), its own for an admin' })
  @ApiPage(AccountView)
  list(@CallerKey() key: AuthenticatedKey, @Query() query: ListAccountsQuery) {
    return this.accounts.list(key, query);
  }

  @Post('accounts')
  @RequireScopes(OPERATOR)
  @ApiOperation({ summary: 'Create an account (operator); recorded in the _audit chain of system' })
  @ApiData(AccountView, 201, 'Created')
  @ApiConflict('the name is taken')
  @ApiErrors(413, 415)
  create(@CallerKey() key: AuthenticatedKey, @Body() body: CreateAccountDto, @Query() _query: NoQueryDto) {
    return this.accounts.create(key, body);
  }

  @Get('accounts/:accountId')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'One account with its counts (operator, or admin of that account; else 404)' })
  @ApiData(AccountView)
  @ApiErrors(404)
  get(@CallerKey() key: AuthenticatedKey, @Param('accountId') accountId: string, @Query() _query: NoQueryDto) {
    return this.accounts.get(key, accountId);
  }
}
