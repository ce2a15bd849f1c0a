export * from './search-query';
