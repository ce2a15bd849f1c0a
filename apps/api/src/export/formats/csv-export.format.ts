import { stringify } from 'csv-stringify';
import { canonicalJson } from '@app/hashing';
import { EventView } from '../../events/dto/event.view';
import { ExportFormat } from './export-format';

export const CSV_COLUMNS = [
  'id',
  'timestamp',
  'actor',
  'action',
  'resource',
  'chain_id',
  'chain_name',
  'chain_position',
  'hash',
  'previous_hash',
  'context',
];

/** Cells a spreadsheet would run as a formula (OWASP CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Prefixes formula-like cells with `'`; null stays an empty field. */
export function neutralizeCell(cell: string | null): string | null {
  return cell !== null && FORMULA_START.test(cell) ? `'${cell}` : cell;
}

export function toCsvRecord(event: EventView): (string | null)[] {
  return [
    event.id,
    event.timestamp,
    event.actor,
    event.action,
    event.resource,
    event.chain.id,
    event.chain.name,
    String(event.chain.position),
    event.hash,
    event.previousHash,
    event.context === null ? null : canonicalJson(event.context),
  ].map(neutralizeCell);
}

/**
 * RFC 4180: CRLF after every record, header row, no BOM. `quote_record_delimiter` also quotes a
 * lone CR or LF inside a value, which csv-stringify leaves bare once a record delimiter is set.
 */
export const csvExport: ExportFormat<(string | null)[]> = {
  contentType: 'text/csv; charset=utf-8',
  extension: 'csv',
  toRecord: toCsvRecord,
  encoder: () =>
    stringify({
      header: true,
      columns: CSV_COLUMNS,
      record_delimiter: '\r\n',
      quote_record_delimiter: true,
      bom: false,
      eof: true,
    }),
};
