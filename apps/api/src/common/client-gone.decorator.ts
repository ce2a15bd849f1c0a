import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';

/**
 * An AbortSignal that aborts when the client closes the connection before the response has been
 * written, so that a long handler can stop work nobody will read.
 */
export const ClientGone = createParamDecorator((_data: unknown, context: ExecutionContext): AbortSignal => {
  const response = context.switchToHttp().getResponse<Response>();
  const gone = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) gone.abort();
  });
  return gone.signal;
});
