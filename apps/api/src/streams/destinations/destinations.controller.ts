import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, MANAGE, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../../common/no-query.dto';
import { ApiConflict, ApiData, ApiErrors, ApiPage } from '../../openapi/openapi-responses';
import { DestinationsService } from './destinations.service';
import { ChangeDestinationDto } from './dto/change-destination.dto';
import { CreateDestinationDto } from './dto/create-destination.dto';
import { DestinationView, NewDestinationView } from './dto/destination.view';
import { ListDestinationsQuery } from './dto/list-destinations.query';

type Caller = AuthenticatedKey;
/** A destination's path under the account's, here and in DestinationControlsController. */
export const ONE = ':destinationId';

/** docs/contract.md §16's destinations' settings (their controls: DestinationControlsController): an admin manages its own account's, an operator any account's (else 404). */
@ApiTags('destinations')
@Controller('v1/accounts/:accountId/destinations')
export class DestinationsController {
  constructor(private readonly destinations: DestinationsService) {}

  @Get()
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'The account’s destinations, oldest first, in pages (never their credentials)' })
  @ApiPage(DestinationView)
  @ApiErrors(404)
  list(@CallerKey() key: Caller, @Param('accountId') accountId: string, @Query() query: ListDestinationsQuery) {
    return this.destinations.list(key, accountId, query);
  }

  @Post()
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Create a destination; a webhook’s signing secret is in this answer only' })
  @ApiData(NewDestinationView, 201, 'Created')
  @ApiErrors(404, 413, 415)
  @ApiConflict('the account already has DESTINATIONS_PER_ACCOUNT destinations')
  create(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Body() body: CreateDestinationDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.destinations.create(key, a, body);
  }

  @Get(ONE)
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'A destination and where its delivery stands' })
  @ApiData(DestinationView)
  @ApiErrors(404)
  get(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.destinations.get(key, a, d);
  }

  @Patch(ONE)
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Change settings or credentials (never kind); headers replaces them all' })
  @ApiData(DestinationView)
  @ApiErrors(404, 413, 415)
  change(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Body() body: ChangeDestinationDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.destinations.change(key, a, d, body);
  }

  @Delete(ONE)
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Delete a destination; the answer is the destination as it was' })
  @ApiData(DestinationView, 200, 'Deleted: the destination as it was')
  @ApiErrors(404)
  delete(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.destinations.delete(key, a, d);
  }
}
