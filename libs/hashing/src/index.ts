export * from './canonical-json';
export * from './event-hash';
export * from './signed-note';
export * from './chain-checkpoint';
export * from './merkle';
export * from './cosignature';
export * from './event-hash-v2';
export * from './salt-seed';
