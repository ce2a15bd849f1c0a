import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Nest's Express adapter, with a shorter way out for what almost every handler returns: a JSON
 * object. Nest answers it with Express's `res.json`, which with this app's settings comes to the
 * same bytes, but on the way sets Content-Type twice (each time through mime-types, and once
 * through content-type's parse and format to add the charset), looks up four app settings,
 * copies a body of 1,000 characters or more into a Buffer, and so writes headers and body as two
 * chunks: about 5 % of the CPU of a proof request (bench `proof`, BENCH_PROFILE).
 *
 * Here the same response is written directly: `application/json; charset=utf-8`, its
 * Content-Length, the text in one write with the headers. Everything else takes Nest's own path:
 * any body that is not a plain JSON object (nothing, a string, a StreamableFile, a Buffer), a
 * response whose Content-Type is already set, a status without a body (204, 205, 304), and a
 * conditional request (If-None-Match, If-Modified-Since), which Express may answer 304. ETags are
 * off (configureApp), so Express would not compute one either; the JSON settings (`json replacer`,
 * `json spaces`, `json escape`) are never set in this app.
 */
export class JsonReplyAdapter extends ExpressAdapter {
  private unmatched: RequestHandler | null = null;

  /**
   * A handler for requests no route took, run after every route and before Nest's 404 handler
   * (configureApp: authentication under /v1/, then 405 + Allow; see unmatched-requests.ts). Nest
   * registers its 404 handler right after the routes: that is the one moment to put it there.
   */
  answerUnmatchedWith(handler: RequestHandler): void {
    this.unmatched = handler;
  }

  override setNotFoundHandler(handler: Parameters<ExpressAdapter['setNotFoundHandler']>[0], prefix?: string): unknown {
    if (this.unmatched) this.use(this.unmatched);
    return super.setNotFoundHandler(handler, prefix);
  }

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (!isPlainJson(body) || response.getHeader('Content-Type') !== undefined) {
      return super.reply(response, body, statusCode);
    }
    const status = statusCode ?? response.statusCode;
    const request = response.req as Request;
    if (NO_BODY.has(status) || isConditional(request)) return super.reply(response, body, statusCode);
    const text = JSON.stringify(body) as string | undefined;
    if (text === undefined) return super.reply(response, body, statusCode);
    if (statusCode) response.status(statusCode);
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(text));
    return request.method === 'HEAD' ? response.end() : response.end(text, 'utf8');
  }
}

/** Statuses Express answers without a body (and, but for 205, without Content-Type and Content-Length). */
const NO_BODY = new Set([204, 205, 304]);

/** What Nest hands `res.json`: an object that is neither a StreamableFile nor binary data. */
function isPlainJson(body: unknown): body is object {
  return typeof body === 'object' && body !== null && !(body instanceof StreamableFile) && !ArrayBuffer.isView(body);
}

/** A request that Express's freshness check (`req.fresh`) may turn into a 304. */
function isConditional(request: Request): boolean {
  return request.headers['if-none-match'] !== undefined || request.headers['if-modified-since'] !== undefined;
}
