import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { READ, RequireScopes } from '@app/auth';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { ConsistencyProofQuery, InclusionProofQuery } from './dto/proof.query';
import { ConsistencyProofView, InclusionProofView } from './dto/proof.view';
import { ProofsService } from './proofs.service';
import { ReadAccount } from '../read-account/read-account.decorator';

/** RFC 9162 Merkle proofs of a chain (docs/contract.md §10). Read-only: the default `read` scope. */
@ApiTags('proofs')
@Controller('v1')
export class ProofsController {
  constructor(private readonly proofs: ProofsService) {}

  @Get('events/:id/proof')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'Inclusion proof of the event in its chain’s Merkle tree of `size` events (RFC 9162)' })
  @ApiData(InclusionProofView)
  @ApiErrors(404)
  proof(@ReadAccount() account: string, @Param('id') id: string, @Query() query: InclusionProofQuery) {
    return this.proofs.inclusion(account, id, query);
  }

  @Get('chain/:chainId/consistency')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'Consistency proof between the chain’s Merkle trees of `from` and `to` events (RFC 9162)' })
  @ApiData(ConsistencyProofView)
  @ApiErrors(404, 410)
  consistency(
    @ReadAccount() account: string,
    @Param('chainId') chainId: string,
    @Query() query: ConsistencyProofQuery,
  ) {
    return this.proofs.consistency(account, chainId, query);
  }
}
