import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthenticatedKey } from '@app/auth';
import { accountReadBy, AccountReadingRequest } from '../read-account/read-account.decorator';
import { BOUNDED_READ } from './bounded-read.decorator';
import { BoundedReads } from './bounded-reads';

/**
 * A step of RequestGuards, after the key and the rate limit: a bounded read of an account that
 * already has READS_PER_ACCOUNT of them in flight is refused (429) here, before the validation
 * pipe parses its query. A tenant whose clients loop on refused reads (a `q` of many terms each)
 * then costs the instance little more than the refusal itself, and other accounts' requests keep
 * their share of the event loop (docs/contract.md §8). The slot itself is taken by BoundedReads when the
 * read runs; this only refuses early what it would refuse. Both count the account read
 * (ReadAccountGuard, before this): an operator's reads of an account queue with that account's
 * own, whose data and indexes they scan, and never in a lane of their own beside them.
 */
@Injectable()
export class ReadAdmission implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly reads: BoundedReads,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http' || !this.reflector.get<boolean>(BOUNDED_READ, context.getHandler())) return true;
    const request = context.switchToHttp().getRequest<AccountReadingRequest & { user?: AuthenticatedKey }>();
    const account = accountReadBy(request) ?? request.user?.accountId;
    if (account !== undefined) this.reads.refuseIfFull(account);
    return true;
  }
}
