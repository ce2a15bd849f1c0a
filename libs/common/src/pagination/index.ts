export * from './cursor';
export * from './page-query.dto';
