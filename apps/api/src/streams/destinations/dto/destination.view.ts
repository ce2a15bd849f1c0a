import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { DESTINATION_ID } from '@app/common';
import { DESTINATION_FORMATS, DESTINATION_KINDS } from '../destination-kinds';

/** The last failed attempt, as the delivery engine stored it (inline: a $ref cannot be null in OpenAPI 3.0). */
export interface DestinationErrorView {
  at: string;
  status: number | null;
  message: string;
}

const LAST_ERROR: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  // `required` lists the object's own fields; `selfRequired` keeps lastError itself in the view's required list.
  required: ['at', 'status', 'message'],
  selfRequired: true,
  properties: {
    at: { type: 'string', format: 'date-time' },
    status: {
      type: 'integer',
      nullable: true,
      description: 'The receiver’s status; null for a timeout or network error',
    },
    message: { type: 'string', example: '503 Service Unavailable' },
  },
};

/** A destination on the wire (docs/contract.md §16): never a credential (token, key, header value, secret). */
export class DestinationView {
  @ApiProperty({ pattern: DESTINATION_ID.source, example: 'dst_01KAR2Y6T0F5M3Q8W9Z1B4C7D3' })
  id!: string;

  @ApiProperty({ example: 'SIEM' })
  name!: string;

  @ApiProperty({ enum: DESTINATION_KINDS })
  kind!: string;

  @ApiProperty({ example: 'https://192.0.2.10:8443/hooks/audit' })
  url!: string;

  @ApiProperty({ enum: DESTINATION_FORMATS })
  format!: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  q!: string | null;

  @ApiProperty({ type: 'integer', example: 100 })
  batchSize!: number;

  @ApiProperty({ type: 'integer', example: 10 })
  timeoutSeconds!: number;

  @ApiProperty({
    enum: ['active', 'retrying', 'paused', 'disabled'],
    description:
      'retrying: the last attempt failed; paused: by a person, or after STREAM_PAUSE_AFTER_HOURS of failures; disabled: the receiver answered 410',
  })
  state!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ description: '`now`, `beginning` or the ISO time given at creation', example: 'now' })
  start!: string;

  @ApiProperty({ type: 'integer', minimum: 0, example: 0 })
  deliveredEvents!: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  lastDeliveredAt!: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'The timestamp of the last event delivered',
    example: null,
  })
  lastDeliveredEventAt!: string | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    minimum: 0,
    description: '0 when active and caught up, else seconds since lastDeliveredEventAt; null before any delivery',
    example: null,
  })
  lagSeconds!: number | null;

  @ApiProperty({ type: 'integer', minimum: 0, example: 0 })
  consecutiveFailures!: number;

  @ApiProperty({
    ...LAST_ERROR,
    description:
      'The last failed attempt, kept after later successes (consecutiveFailures says whether delivery is failing now); null before any failure',
  })
  lastError!: DestinationErrorView | null;
}

/** A destination just made, or a webhook given a new secret: the only answers that hold a signing secret. */
export class NewDestinationView extends DestinationView {
  @ApiPropertyOptional({
    description: 'Webhooks only: the Standard Webhooks signing secret, shown this once',
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8JjfOq7S+6A=',
  })
  secret?: string;
}
