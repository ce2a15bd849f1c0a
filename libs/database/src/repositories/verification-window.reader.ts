import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlQuery, verificationWindowReads, VerificationWindowReads } from './verification-window.queries';

/**
 * The reads of a whole-chain verification window on the service's pool: where there are no worker
 * threads (the embedded database, VERIFY_WORKERS=0). The worker threads run the same
 * `verificationWindowReads` on their own connections, row by row; TypeORM hands over whole
 * results, which for a bounded window only costs memory. Its queries read three tables, so it
 * belongs to none of their repositories.
 */
@Injectable()
export class VerificationWindowReader {
  readonly reads: VerificationWindowReads;

  constructor(@InjectDataSource() dataSource: DataSource) {
    // The rows are what the query's SELECT list names (RowStream), as the worker threads' are.
    this.reads = verificationWindowReads(async <Row>({ text, values }: SqlQuery, onRow: (row: Row) => void) =>
      (await dataSource.manager.query<Row[]>(text, values)).forEach(onRow),
    );
  }
}
