import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, ValidateBy } from 'class-validator';
import { isInstant, MAX_SEARCH_QUERY_LENGTH, MayBeAbsent } from '@app/common';
import { IsSearchQuery } from '../../../events/dto/search-query.validator';
import { NO_CONTROL_CHARACTERS, PRINTABLE_ASCII } from '../../../common/text-patterns';
import { ApiSchemaKeywords } from '../../../openapi/openapi-responses';
import { MAX_DESTINATION_URL_LENGTH } from '../../sinks';
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_TIMEOUT_SECONDS,
  DESTINATION_FORMATS,
  DESTINATION_KINDS,
  DestinationKind,
  MAX_BATCH_SIZE,
  MAX_CREDENTIAL_LENGTH,
  MAX_DESTINATION_NAME_LENGTH,
  MAX_OPTION_LENGTH,
  MAX_TIMEOUT_SECONDS,
} from '../destination-kinds';
import { DestinationRules } from './destination-fields';
import { HEADER_VALUE, IsDestinationHeaders, MAX_HEADER_VALUE_LENGTH, MAX_HEADERS } from './headers.validator';

const isStart = (value: unknown): boolean => value === 'now' || value === 'beginning' || isInstant(value);

/** Body of POST /v1/accounts/:accountId/destinations (docs/contract.md §16); which fields a kind takes: the service. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateDestinationDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_DESTINATION_NAME_LENGTH,
    pattern: NO_CONTROL_CHARACTERS.source,
    description: 'Shown to people: no control characters',
    example: 'SIEM',
  })
  @DestinationRules.name()
  name!: string;

  @ApiProperty({ enum: DESTINATION_KINDS, description: 'Never changes' })
  @IsIn(DESTINATION_KINDS, { message: `kind must be one of ${DESTINATION_KINDS.join(', ')}` })
  kind!: DestinationKind;

  @ApiProperty({
    minLength: 1,
    maxLength: MAX_DESTINATION_URL_LENGTH,
    description:
      'https://… (webhook, splunk_hec, datadog, otlp; http:// only with STREAM_ALLOW_PRIVATE_NETWORKS=true), ' +
      'syslog://host:port or syslog+tls://host:port, nats://host:port/<subject>',
    example: 'https://192.0.2.10:8443/hooks/audit',
  })
  @DestinationRules.url()
  url!: string;

  @ApiPropertyOptional({ enum: DESTINATION_FORMATS, default: 'native', description: 'cef for syslog only' })
  @MayBeAbsent()
  @IsIn(DESTINATION_FORMATS, { message: `format must be one of ${DESTINATION_FORMATS.join(', ')}` })
  format?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_SEARCH_QUERY_LENGTH,
    description: 'Deliver only the events this search (as GET /v1/events’ q) matches; absent or null: every event',
    example: 'action:order.*',
  })
  @IsOptional()
  @IsSearchQuery()
  q?: string | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_BATCH_SIZE, default: DEFAULT_BATCH_SIZE })
  @MayBeAbsent()
  @DestinationRules.batchSize()
  batchSize?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_SECONDS, default: DEFAULT_TIMEOUT_SECONDS })
  @MayBeAbsent()
  @DestinationRules.timeoutSeconds()
  timeoutSeconds?: number;

  @ApiPropertyOptional({
    default: 'now',
    description: '`now` (events appended after the creation), `beginning` (every retained event) or an ISO time',
    example: 'now',
  })
  @MayBeAbsent()
  @IsString()
  @ValidateBy(
    { name: 'isStart', validator: { validate: isStart } },
    { message: 'start must be now, beginning or an ISO 8601 date-time with an offset' },
  )
  start?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: MAX_HEADER_VALUE_LENGTH, pattern: HEADER_VALUE.source },
    maxProperties: MAX_HEADERS,
    description:
      'Sent with every request; never shown again. RFC 7230 names, printable ASCII values; not Host, ' +
      'Content-Length, Content-Type, Content-Encoding, Authorization, DD-API-KEY, webhook-*, Transfer-Encoding, Connection',
    example: { 'X-Tenant': 'acme' },
  })
  @MayBeAbsent()
  @IsDestinationHeaders()
  headers?: Record<string, string>;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_CREDENTIAL_LENGTH,
    pattern: PRINTABLE_ASCII.source,
    description: 'splunk_hec only (required there); never shown again; printable ASCII without spaces',
  })
  @MayBeAbsent()
  @DestinationRules.credential('token')
  token?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_CREDENTIAL_LENGTH,
    pattern: PRINTABLE_ASCII.source,
    description: 'datadog only (required there); never shown again; printable ASCII without spaces',
  })
  @MayBeAbsent()
  @DestinationRules.credential('apiKey')
  apiKey?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_OPTION_LENGTH,
    pattern: PRINTABLE_ASCII.source,
    description: 'splunk_hec only; printable ASCII without spaces',
  })
  @MayBeAbsent()
  @DestinationRules.option('sourcetype')
  sourcetype?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_OPTION_LENGTH,
    pattern: PRINTABLE_ASCII.source,
    description: 'splunk_hec only; printable ASCII without spaces',
  })
  @MayBeAbsent()
  @DestinationRules.option('index')
  index?: string;
}
