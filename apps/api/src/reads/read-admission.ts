import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AuthenticatedKey } from '@app/auth';
import { BOUNDED_READ } from './bounded-read.decorator';
import { BoundedReads } from './bounded-reads';

/**
 * A step of RequestGuards, after the key and the rate limit: a bounded read of an account that
 * already has READS_PER_ACCOUNT of them in flight is refused (429) here, before the validation
 * pipe parses its query. A tenant whose clients loop on refused reads (a `q` of many terms each)
 * then costs the instance little more than the refusal itself, and other accounts' requests keep
 * their share of the event loop (docs/contract.md §8). The slot itself is taken by BoundedReads when the
 * read runs; this only refuses early what it would refuse.
 */
@Injectable()
export class ReadAdmission implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly reads: BoundedReads,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http' || !this.reflector.get<boolean>(BOUNDED_READ, context.getHandler())) return true;
    const key = context.switchToHttp().getRequest<Request & { user?: AuthenticatedKey }>().user;
    if (key) this.reads.refuseIfFull(key.accountId);
    return true;
  }
}
