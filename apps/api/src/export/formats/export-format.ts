import { Transform } from 'node:stream';
import type { HashingV2 } from '@app/hashing';
import type { ExportedPrunedChain } from '@app/verification';
import { EventView } from '../../events/dto/event.view';
import { ExportFormatName } from '../dto/export-query.dto';

/** The `export` object of a JSON export: known in full before the first row is sent. */
export interface ExportHeader {
  format: ExportFormatName;
  generatedAt: string;
  period: { after: string; before: string };
  filters: {
    actor: string | null;
    action: string | null;
    resource: string | null;
    chain_id: string | null;
    q: string | null;
  };
  count: number;
  /** The chains of the export that retention pruned (docs/contract.md §14); absent when there are none. */
  pruned?: ExportedPrunedChain[];
  /** Each version-2 event's salts and commitments, by event id (docs/contract.md §17); absent when there are none. */
  hashing?: Record<string, HashingV2>;
}

/** How one export format turns events into bytes: a record per event, then an encoding stream. */
export interface ExportFormat<R = unknown> {
  contentType: string;
  extension: string;
  toRecord(event: EventView): R;
  /** Writable side takes records, readable side gives the file's text. */
  encoder(header: ExportHeader): Transform;
}
