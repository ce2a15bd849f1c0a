import type { AuditTrailClientOptions, RecorderOptions } from '@audit-trail/client';
import type { AuditedRequest } from './audited';

export const AUDIT_TRAIL_OPTIONS = Symbol('audit-trail:options');

export interface AuditTrailModuleOptions extends AuditTrailClientOptions {
  /** The recorder's options; `spoolDir` defaults to `./audit-spool` (durable), `null` keeps events in memory only. */
  recorder?: Omit<RecorderOptions, 'spoolDir'> & { spoolDir?: string | null };
  /** The actor of @Audited events, from the request; default principalActor. */
  actor?: (request: AuditedRequest) => string;
  /** The chain of @Audited events that name none; default `default`. */
  chain?: string;
  /** How long close() may send on shutdown (default 10 s); what is left stays in the spool. */
  shutdownTimeoutMs?: number;
}

/**
 * The request's principal as an actor: `user.id`, `user.sub` (JWT), `user.email`, `user.name`, or
 * `user` itself when it is a string; `anonymous` when the request has no principal.
 */
export function principalActor(request: AuditedRequest): string {
  const user = request.user;
  if (typeof user === 'string' && user.length > 0) return user;
  if (typeof user === 'object' && user !== null) {
    const fields = user as Record<string, unknown>;
    for (const name of ['id', 'sub', 'email', 'name']) {
      const value = fields[name];
      if ((typeof value === 'string' && value.length > 0) || typeof value === 'number') return String(value);
    }
  }
  return 'anonymous';
}
