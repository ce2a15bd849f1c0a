import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsObject } from 'class-validator';
import type { SchemaMode } from '@app/database';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { MAX_SCHEMA_BYTES } from '../schema-compiler';

export const SCHEMA_MODES: readonly SchemaMode[] = ['warn', 'enforce'];

const SCHEMA_DESCRIPTION = `A JSON Schema (2020-12) of the object { actor, resource, context } of an event (resource and context null when absent). Untrusted input: at most ${MAX_SCHEMA_BYTES / 1024} KiB as JSON text, no $ref outside the schema itself (only # and #/…; no $id, $anchor, $dynamicRef), no recursion, bounded depth and size, strict keywords and formats; patterns run in linear time (RE2 syntax: no backreferences or lookaround). 400 naming schema otherwise`;

/** The schema member of PUT …/schemas/:action and POST …/preview: a JSON object, checked by the service. */
function SchemaMember(): PropertyDecorator {
  return (target, property) => {
    ApiProperty({
      type: 'object',
      additionalProperties: true,
      description: SCHEMA_DESCRIPTION,
      example: {
        type: 'object',
        properties: {
          context: {
            type: 'object',
            properties: { amount: { type: 'number', minimum: 0 } },
            required: ['amount'],
          },
        },
        required: ['context'],
      },
    })(target, property);
    IsObject({ message: 'schema must be a JSON object (a JSON Schema 2020-12); DELETE removes an action’s schema' })(
      target,
      property,
    );
  };
}

/** Body of PUT /v1/accounts/:accountId/schemas/:action (docs/contract.md §19). */
@ApiSchemaKeywords({ additionalProperties: false })
export class PutSchemaDto {
  @SchemaMember()
  schema!: Record<string, unknown>;

  @ApiProperty({
    enum: SCHEMA_MODES,
    description: 'warn: events that do not satisfy it are stored and counted; enforce: they are refused (400)',
  })
  @IsIn(SCHEMA_MODES, { message: 'mode must be warn or enforce' })
  mode!: SchemaMode;
}

/** Body of POST /v1/accounts/:accountId/schemas/:action/preview (docs/contract.md §19). */
@ApiSchemaKeywords({ additionalProperties: false })
export class PreviewSchemaDto {
  @SchemaMember()
  schema!: Record<string, unknown>;
}
