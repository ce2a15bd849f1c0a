export * from './access';
export * from './active-caller';
export * from './keys.service';
