import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, Observable, switchMap } from 'rxjs';
import { type NewEvent, Recorder } from '@audit-trail/client';
import { AUDITED, AuditedMetadata, AuditedRequest } from './audited';
import { AUDIT_TRAIL_OPTIONS, AuditTrailModuleOptions, principalActor } from './options';

/** @Audited's work: after the handler succeeds, one event through the recorder, then the handler's answer. */
@Injectable()
export class AuditedInterceptor implements NestInterceptor {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(Recorder) private readonly recorder: Recorder,
    @Inject(AUDIT_TRAIL_OPTIONS) private readonly options: AuditTrailModuleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const audited = this.reflector.getAllAndOverride<AuditedMetadata | undefined>(AUDITED, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!audited || context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<AuditedRequest>();
    return next
      .handle()
      .pipe(
        switchMap((result: unknown) =>
          from(this.recorder.record(this.eventOf(audited, request, result)).then(() => result)),
        ),
      );
  }

  private eventOf(audited: AuditedMetadata, request: AuditedRequest, result: unknown): NewEvent {
    const actor = (this.options.actor ?? principalActor)(request);
    const chain = typeof audited.chain === 'function' ? audited.chain(request) : (audited.chain ?? this.options.chain);
    return {
      actor,
      action: audited.action,
      resource: audited.resource?.(request, result) ?? null,
      context: audited.context?.(request, result) ?? null,
      ...(chain === undefined ? {} : { chain }),
    };
  }
}
