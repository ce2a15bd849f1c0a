import { CanActivate, ExecutionContext, Injectable, SetMetadata, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { NextFunction, raw, Request, Response } from 'express';
import {
  AppError,
  asError,
  MAX_BODY_BYTES,
  MAX_BODY_DEPTH,
  MAX_BODY_VALUES,
  MAX_INFLATION_RATIO,
  parseIJson,
} from '@app/common';

/**
 * What must admit a request before its body is read (`@AdmitBody`): throws (an AppError, e.g. 503
 * with Retry-After) when the request could not be served now, so a body that would be refused
 * anyway costs nothing to read or parse.
 */
export interface BodyAdmission {
  admitBody(): void;
}

/**
 * Reads a request's body after authentication (docs/contract.md §8): the last step of RequestGuards, after
 * ApiKeyGuard and the rate limit, and only for a request they let through with a key (`req.user`),
 * so a request without a valid key never has its body read. Only a handler with a `@Body()` parameter reads one;
 * elsewhere a body is left unread (Node discards it once the response is sent). A guard, not an
 * interceptor: any global interceptor puts Nest's rxjs machinery on every request (about 10 % of a
 * list request's CPU, measured with `npm run bench`).
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  /** Per handler: the most bytes its body may have, or null when it takes no body. */
  private readonly limits = new WeakMap<object, number | null>();
  /** Per handler: what admits its requests before their body is read (`@AdmitBody`), or null. */
  private readonly admissions = new WeakMap<object, BodyAdmission | null>();

  constructor(private readonly moduleRef: ModuleRef) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const limit = context.getType() === 'http' ? this.bodyLimit(context) : null;
    if (limit === null) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { user?: unknown }>();
    if (req.user === undefined) return true;
    this.admission(context)?.admitBody();
    requireJsonBody(req);
    await new Promise<void>((resolve, reject) =>
      parseJsonBody(
        req,
        http.getResponse<Response>(),
        (error?: unknown) => (error === undefined ? resolve() : reject(asError(error))),
        limit,
      ),
    );
    return true;
  }

  private bodyLimit(context: ExecutionContext): number | null {
    const handler = context.getHandler();
    let limit = this.limits.get(handler);
    if (limit === undefined) {
      const params =
        (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) as object | undefined) ?? {};
      const takesBody = Object.keys(params).some((key) => key.split(':')[0] === String(RouteParamtypes.BODY));
      limit = takesBody ? ((Reflect.getMetadata(BODY_LIMIT, handler) as number | undefined) ?? MAX_BODY_BYTES) : null;
      this.limits.set(handler, limit);
    }
    return limit;
  }

  private admission(context: ExecutionContext): BodyAdmission | null {
    const handler = context.getHandler();
    let admission = this.admissions.get(handler);
    if (admission === undefined) {
      const token = Reflect.getMetadata(BODY_ADMISSION, handler) as Type<BodyAdmission> | undefined;
      admission = token ? (this.moduleRef.get(token, { strict: false }) ?? null) : null;
      this.admissions.set(handler, admission);
    }
    return admission;
  }
}

const BODY_LIMIT = 'audit:body-limit';
const BODY_ADMISSION = 'audit:body-admission';

/** A handler whose requests `provider` (a BodyAdmission) admits before their body is read. */
export const AdmitBody = (provider: Type<BodyAdmission>) => SetMetadata(BODY_ADMISSION, provider);

/** A handler whose body may be larger than MAX_BODY_BYTES (e.g. the batch append's 8 MiB). */
export const BodyLimit = (bytes: number) => SetMetadata(BODY_LIMIT, bytes);

/** The Content-Type headers most clients send, known to be JSON without parsing them (type-is would agree). */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);

/** A request that carries a body must say it is JSON (415 otherwise). */
function requireJsonBody(req: Request): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !PLAIN_JSON.has(req.headers['content-type'] ?? '') && !req.is('application/json')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON (Content-Type: application/json).');
  }
}

/** body-parser's raw reader (limit, inflation), one per limit. */
const readers = new Map<number, ReturnType<typeof raw>>();
function readerFor(limit: number): ReturnType<typeof raw> {
  let reader = readers.get(limit);
  if (!reader) readers.set(limit, (reader = raw({ limit, type: () => true })));
  return reader;
}
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * The JSON body parser, the one place a body is read and parsed: body-parser reads it (limit,
 * inflation; a compressed body may inflate MAX_INFLATION_RATIO times at most), then it is parsed
 * as I-JSON (docs/contract.md §8): UTF-8 only, decoded without replacing anything, then `parseIJson`
 * (at most MAX_BODY_VALUES values, counted first; duplicates, `__proto__`, depth).
 */
function parseJsonBody(req: Request, res: Response, next: NextFunction, limit: number): void {
  const charset = CHARSET.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    next(bodyError({ type: 'charset.unsupported' }, limit));
    return;
  }
  const wire = countWireBytes(req);
  readerFor(limit)(req, res, (error?: unknown) => {
    if (error !== undefined) return next(bodyError(error, limit));
    if (!Buffer.isBuffer(req.body)) return next();
    try {
      if (wire !== null) refuseInflation(req.body.length, wire.bytes);
      req.body = req.body.length === 0 ? undefined : parseIJson(decodeUtf8(req.body), MAX_BODY_DEPTH, MAX_BODY_VALUES);
    } catch (e) {
      return next(e);
    }
    next();
  });
}

/** For a compressed body, a count of the bytes received (what body-parser inflates); null otherwise. */
function countWireBytes(req: Request): { bytes: number } | null {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return null;
  const wire = { bytes: 0 };
  req.on('data', (chunk: Buffer) => (wire.bytes += chunk.length));
  return wire;
}

/** A body that inflated beyond MAX_INFLATION_RATIO times its size on the wire (and beyond MAX_BODY_BYTES) is refused before it is parsed. */
function refuseInflation(inflated: number, wire: number): void {
  if (inflated > MAX_BODY_BYTES && inflated > MAX_INFLATION_RATIO * wire) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The request body inflates to more than ${MAX_INFLATION_RATIO} times its compressed size.`,
      { maxInflationRatio: MAX_INFLATION_RATIO },
    );
  }
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw AppError.validation(
      [{ field: 'body', message: 'body is not valid UTF-8' }],
      'The request body is not valid UTF-8.',
    );
  }
}

function bodyError(error: unknown, limit: number): AppError {
  switch ((error as { type?: unknown }).type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`, {
        limitBytes: limit,
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be UTF-8 encoded JSON.');
    default:
      return AppError.validation(
        [{ field: 'body', message: 'body is not valid JSON' }],
        'The request body is not valid JSON.',
      );
  }
}
