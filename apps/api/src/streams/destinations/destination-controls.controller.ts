import { Body, Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, MANAGE, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../../common/no-query.dto';
import { ApiConflict, ApiData, ApiErrors, ApiRateLimited } from '../../openapi/openapi-responses';
import { DestinationControlsService } from './destination-controls.service';
import { ONE } from './destinations.controller';
import { DestinationView, NewDestinationView } from './dto/destination.view';
import { ReplayDestinationDto } from './dto/replay-destination.dto';

type Caller = AuthenticatedKey;

/** docs/contract.md §16: pause, resume, replay a destination, rotate a webhook's secret; who may: as DestinationsController. */
@ApiTags('destinations')
@Controller('v1/accounts/:accountId/destinations')
export class DestinationControlsController {
  constructor(private readonly controls: DestinationControlsService) {}

  @Post(`${ONE}/pause`)
  @RequireScopes(MANAGE)
  @HttpCode(200)
  @ApiOperation({ summary: 'Stop delivering until resumed (again: unchanged)' })
  @ApiData(DestinationView)
  @ApiErrors(404)
  pause(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.controls.pause(key, a, d);
  }

  @Post(`${ONE}/resume`)
  @RequireScopes(MANAGE)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Deliver again (a paused or disabled destination) once what is left of its backoff has passed',
  })
  @ApiData(DestinationView)
  @ApiErrors(404)
  @ApiRateLimited('this destination was already resumed in the last minute')
  resume(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.controls.resume(key, a, d);
  }

  @Post(`${ONE}/replay`)
  @RequireScopes(MANAGE)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Deliver again every retained event from `from` on; the state and the backoff are unchanged',
  })
  @ApiData(DestinationView)
  @ApiErrors(404, 413, 415)
  @ApiRateLimited('this destination was already replayed in the last minute')
  replay(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Body() body: ReplayDestinationDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.controls.replay(key, a, d, body);
  }

  @Post(`${ONE}/rotate-secret`)
  @RequireScopes(MANAGE)
  @HttpCode(200)
  @ApiOperation({
    summary: 'A webhook’s new signing secret, in this answer only; the old one is also signed with for 24 hours',
  })
  @ApiData(NewDestinationView)
  @ApiErrors(404)
  @ApiConflict('the destination is not a webhook: it has no signing secret')
  rotateSecret(
    @CallerKey() key: Caller,
    @Param('accountId') a: string,
    @Param('destinationId') d: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.controls.rotateSecret(key, a, d);
  }
}
