import { InitialSchema1763798400000 } from './1763798400000-initial-schema';

/** Every migration, in order. New ones are appended here after review. */
export const MIGRATIONS = [InitialSchema1763798400000];
