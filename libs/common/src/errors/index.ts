export * from './as-error';
export * from './app-error';
export * from './error-code';
export * from './global-exception.filter';
