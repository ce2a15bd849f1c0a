/** @audit-trail/client/nestjs: AuditTrailModule and @Audited (docs/contract.md §20). Needs @nestjs/common, @nestjs/core and rxjs. */
export { AuditTrailModule } from './audit-trail.module';
export { Audited, AUDITED } from './audited';
export type { AuditedMetadata, AuditedOptions, AuditedRequest } from './audited';
export { AuditedInterceptor } from './audited.interceptor';
export { AUDIT_TRAIL_OPTIONS, principalActor } from './options';
export type { AuditTrailModuleOptions } from './options';
