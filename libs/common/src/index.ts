export * from './config';
export * from './errors';
export * from './pagination';
export * from './validation';
