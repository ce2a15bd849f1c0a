import { ApiProperty, OmitType } from '@nestjs/swagger';
import { CHAIN_ID, EXPORT_LIMIT } from '@app/common';
import { EventView } from '../../events/dto/event.view';
import { ExportHeader } from '../formats/export-format';
import { ExportItem } from '../formats/json-export.format';
import { EXPORT_FORMATS, ExportFormatName } from './export-query.dto';

/** An exported event: the Event resource without createdAt (the spec's export fields). `implements` keeps it in step with the encoder. */
export class ExportedEventView extends OmitType(EventView, ['createdAt'] as const) implements ExportItem {}

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

  @ApiProperty({ type: String, nullable: true, description: 'The search (`q`), as given' })
  q!: string | null;
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
