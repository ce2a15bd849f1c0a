export * from './i-json';
