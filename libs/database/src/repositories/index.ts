import { Provider } from '@nestjs/common';
import { TransactionRunner } from '../transaction-runner';

/**
 * One repository per table (Immich's `*.repository.ts`): each owns every query of its table.
 * Services call repositories; only repositories and the TransactionRunner touch TypeORM.
 */
export const REPOSITORIES: Provider[] = [TransactionRunner];
