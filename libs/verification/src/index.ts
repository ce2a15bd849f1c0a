export * from './event-checks';
export * from './audited-event';
export * from './chain-audit';
export * from './chain-window';
export * from './exported-event';
export * from './window-tree';
export * from './prune-record';
export * from './erasure-record';
