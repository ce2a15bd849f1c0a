export * from './access';
export * from './active-caller';
export * from './audit-trail';
export * from './keys.service';
