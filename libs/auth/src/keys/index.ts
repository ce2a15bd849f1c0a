export * from './access';
export * from './audit-trail';
export * from './keys.service';
