import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBoundedRead } from '../openapi/openapi-responses';

/** Marks a handler whose work is a bounded read (BoundedReads), for ReadAdmission. */
export const BOUNDED_READ = 'audit:bounded-read';

/**
 * A handler that reads over many events (the list, statistics, the export): an account's request
 * beyond READS_PER_ACCOUNT is refused by ReadAdmission before its query or `q` is even parsed, and
 * its description lists the 422 and 429 of such reads.
 */
export function BoundedRead(more422 = '', more429 = ''): MethodDecorator {
  return applyDecorators(SetMetadata(BOUNDED_READ, true), ApiBoundedRead(more422, more429));
}
