export * from './validation-pipe';
export * from './decimal-integer';
export * from './may-be-absent';
