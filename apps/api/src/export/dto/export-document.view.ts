import { ApiProperty } from '@nestjs/swagger';
import { CHAIN_ID, EXPORT_LIMIT } from '@app/common';
import { HEX_HASH } from '@app/hashing';
import { EventChainRef } from '../../events/dto/event.view';
import { ExportHeader } from '../formats/export-format';
import { ExportItem } from '../formats/json-export.format';
import { EXPORT_FORMATS, ExportFormatName } from './export-query.dto';

/** An exported event: the spec's export fields (no createdAt). `implements` keeps it in step with the encoder. */
export class ExportedEventView implements ExportItem {
  @ApiProperty({ example: 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2' })
  id!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T07:24:53.449Z' })
  timestamp!: string;

  @ApiProperty({ example: 'alice@example.com' })
  actor!: string;

  @ApiProperty({ example: 'invoice.approve' })
  action!: string;

  @ApiProperty({ type: String, nullable: true, example: 'invoice:42' })
  resource!: string | null;

  @ApiProperty({ type: EventChainRef })
  chain!: EventChainRef;

  @ApiProperty({ description: 'hex(SHA-256(JCS(payload))), see docs/hashing.md', pattern: HEX_HASH.source })
  hash!: string;

  @ApiProperty({ pattern: HEX_HASH.source })
  previousHash!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  context!: Record<string, unknown> | null;
}

export class ExportPeriodView {
  @ApiProperty({ format: 'date-time', description: 'Inclusive, as UTC' })
  after!: string;

  @ApiProperty({ format: 'date-time', description: 'Inclusive, as UTC' })
  before!: string;
}

/** The filters of the request; null for those not given. */
export class ExportFiltersView {
  @ApiProperty({ type: String, nullable: true })
  actor!: string | null;

  @ApiProperty({ type: String, nullable: true })
  action!: string | null;

  @ApiProperty({ type: String, nullable: true })
  resource!: string | null;

  @ApiProperty({ type: String, nullable: true, pattern: CHAIN_ID.source })
  chain_id!: string | null;
}

export class ExportMetadataView implements ExportHeader {
  @ApiProperty({ enum: EXPORT_FORMATS })
  format!: ExportFormatName;

  @ApiProperty({ format: 'date-time' })
  generatedAt!: string;

  @ApiProperty({ type: ExportPeriodView })
  period!: ExportPeriodView;

  @ApiProperty({ type: ExportFiltersView })
  filters!: ExportFiltersView;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: EXPORT_LIMIT, description: 'The number of items in data' })
  count!: number;
}

/** A JSON export file: `{ export, data }`. */
export class ExportDocumentView {
  @ApiProperty({ type: ExportMetadataView })
  export!: ExportMetadataView;

  @ApiProperty({ type: [ExportedEventView], description: 'Oldest first, by (timestamp, id)' })
  data!: ExportedEventView[];
}
