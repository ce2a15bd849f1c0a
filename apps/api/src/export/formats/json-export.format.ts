import { Transform, TransformCallback } from 'node:stream';
import type { ExportedEvent } from '@app/verification';
import { EventView } from '../../events/dto/event.view';
import { ExportFormat, ExportHeader } from './export-format';

/** An exported event: the spec's export fields, in this order, values as stored (the verifier's wire type). */
export type ExportItem = ExportedEvent;

export function toExportItem({
  id,
  timestamp,
  actor,
  action,
  resource,
  chain,
  hash,
  previousHash,
  context,
}: EventView): ExportItem {
  return { id, timestamp, actor, action, resource, chain, hash, previousHash, context };
}

/**
 * `{"export":{…},"data":[item,item,…]}` written piece by piece: valid JSON as a whole although
 * no more than one item is held at a time.
 */
class JsonExportEncoder extends Transform {
  private separator = '';

  constructor(header: ExportHeader) {
    super({ writableObjectMode: true });
    this.push(`{"export":${JSON.stringify(header)},"data":[`);
  }

  override _transform(item: ExportItem, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(null, this.separator + JSON.stringify(item));
    this.separator = ',';
  }

  override _flush(callback: TransformCallback): void {
    callback(null, ']}');
  }
}

export const jsonExport: ExportFormat<ExportItem> = {
  contentType: 'application/json',
  extension: 'json',
  toRecord: toExportItem,
  encoder: (header) => new JsonExportEncoder(header),
};
