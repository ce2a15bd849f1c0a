import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, OmitType } from '@nestjs/swagger';
import { CHAIN_ID, EXPORT_LIMIT } from '@app/common';
import { HEX_HASH } from '@app/hashing';
import type { ExportedPrunedChain } from '@app/verification';
import { EventHashing, EventView } from '../../events/dto/event.view';
import { ExportHeader } from '../formats/export-format';
import { ExportItem } from '../formats/json-export.format';
import { EXPORT_FORMATS, ExportFormatName } from './export-query.dto';

/**
 * An exported event: the Event resource without createdAt (the spec's export fields; a version-2 event's
 * hashing is in the header, docs/contract.md §17; the action schema that checked it is not exported). `implements` keeps it in step with the encoder.
 */
export class ExportedEventView
  extends OmitType(EventView, ['createdAt', 'hashing', 'erased', 'schema'] as const)
  implements ExportItem {}

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

export class KeptNodeView {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 62 })
  level!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  index!: number;

  @ApiProperty({ pattern: HEX_HASH.source })
  hash!: string;
}

/** A chain of the export that retention pruned (docs/contract.md §14): what the offline verifier needs to start after the prune. */
export class PrunedChainView implements ExportedPrunedChain {
  @ApiProperty({ pattern: CHAIN_ID.source })
  chainId!: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'The last pruned position' })
  lastPosition!: number;

  @ApiProperty({ pattern: HEX_HASH.source, description: 'The hash of the last pruned event' })
  lastHash!: string;

  @ApiProperty({ format: 'date-time', description: 'The timestamp of the last pruned event' })
  lastTimestamp!: string;

  @ApiProperty({
    type: [KeptNodeView],
    description: 'The Merkle nodes kept over positions 1…lastPosition − 1, left to right (RFC 9162 perfect subtrees)',
  })
  nodes!: KeptNodeView[];
}

@ApiExtraModels(EventHashing)
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

  @ApiPropertyOptional({
    type: [PrunedChainView],
    description:
      'The account’s chains (or the chain_id’s) that retention pruned: unsigned helpers with which the offline verifier recomputes a signed checkpoint’s root from the retained events. Absent when none is pruned',
  })
  pruned?: PrunedChainView[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(EventHashing) },
    description:
      'Each version-2 event’s salts and commitments, by event id (docs/contract.md §17): what its hash is recomputed from. Absent when the export holds none',
  })
  hashing?: Record<string, EventHashing>;
}

/** A JSON export file: `{ export, data }`. */
export class ExportDocumentView {
  @ApiProperty({ type: ExportMetadataView })
  export!: ExportMetadataView;

  @ApiProperty({ type: [ExportedEventView], description: 'Oldest first, by (timestamp, id)' })
  data!: ExportedEventView[];
}
