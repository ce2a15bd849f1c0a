export * from './i-json';
export * from './storable-text';
