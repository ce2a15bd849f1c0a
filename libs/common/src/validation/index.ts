export * from './validation-pipe';
export * from './decimal-integer';
