export * from './canonical-json';
export * from './event-hash';
