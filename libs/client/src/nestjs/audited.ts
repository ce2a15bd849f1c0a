import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AuditedInterceptor } from './audited.interceptor';

/** The request as the interceptor reads it: whatever the HTTP adapter gives, with the principal in `user`. */
export interface AuditedRequest {
  user?: unknown;
  params?: Record<string, string>;
  [key: string]: unknown;
}

export interface AuditedOptions {
  /** The event's resource (e.g. `(req) => \`invoice:${req.params?.id}\``); none by default. */
  resource?: (request: AuditedRequest, result: unknown) => string | null | undefined;
  /** The event's context; none by default. Never put secrets here: it is stored and hashed as sent. */
  context?: (request: AuditedRequest, result: unknown) => Record<string, unknown> | null | undefined;
  /** The chain (a name, or from the request); default: the module's `chain`, else `default`. */
  chain?: string | ((request: AuditedRequest) => string);
}

export const AUDITED = Symbol('audit-trail:audited');

export interface AuditedMetadata extends AuditedOptions {
  action: string;
}

/**
 * Records `action` through the module's recorder for each request to this handler (or controller)
 * that succeeds, the actor taken from the request's principal (AuditTrailModule's `actor`), before
 * the answer is sent: a request answered with success has its event safe (in the spool by default).
 * A handler that throws records nothing.
 */
export function Audited(action: string, options: AuditedOptions = {}): MethodDecorator & ClassDecorator {
  const metadata: AuditedMetadata = { action, ...options };
  return applyDecorators(SetMetadata(AUDITED, metadata), UseInterceptors(AuditedInterceptor));
}
