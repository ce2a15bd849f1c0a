export * from './config';
export * from './errors';
export * from './ids';
export * from './pagination';
export * from './validation';
export * from './json';
export * from './limits';
export * from './search';
