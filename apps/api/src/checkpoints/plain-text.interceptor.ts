import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, Observable } from 'rxjs';

/**
 * Sends a handler's string as text/plain. Unlike @Header(), which is applied before the handler
 * runs and would leave errors labelled text/plain, this sets the type only on success.
 */
@Injectable()
export class PlainTextInterceptor implements NestInterceptor<string, string> {
  intercept(context: ExecutionContext, next: CallHandler<string>): Observable<string> {
    return next.handle().pipe(
      map((text) => {
        const response = context.switchToHttp().getResponse<Response>();
        response.setHeader('Content-Type', 'text/plain; charset=utf-8');
        response.setHeader('Cache-Control', 'no-store');
        return text;
      }),
    );
  }
}
