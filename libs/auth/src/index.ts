export * from './api-key';
export * from './api-key.guard';
export * from './api-key.store';
export * from './auth.module';
export * from './authenticated-key';
export * from './decorators';
export * from './key-bootstrap.service';
export * from './key-registration';
