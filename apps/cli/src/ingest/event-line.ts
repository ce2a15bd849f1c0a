import { ArgumentMetadata } from '@nestjs/common';
import { AppError, createValidationPipe, MAX_BATCH_BODY_BYTES, MAX_BODY_DEPTH, parseIJson } from '@app/common';
// The service's own rules for one event, not a copy: the DTO POST /v1/events and each batch item are validated by.
import { CreateEventDto } from '../../../api/src/events/dto/create-event.dto';

/** `{"events":[` … `]}` around the items. */
export const ENVELOPE_BYTES = Buffer.byteLength('{"events":[]}');

/** An item of a batch body sits two levels down (`{"events":[item]}`): what is left of the body's depth. */
const ITEM_DEPTH = MAX_BODY_DEPTH - 2;

const pipe = createValidationPipe();
const asEventBody: ArgumentMetadata = { type: 'body', metatype: CreateEventDto, data: '' };

/**
 * Why a line cannot be one event of POST /v1/events/batch, as the service would say it (I-JSON,
 * then the CreateEventDto rules through the service's validation pipe), one message per problem:
 * empty when the line is a valid event. The server still has the last word.
 */
export async function eventLineProblems(text: string): Promise<string[]> {
  if (ENVELOPE_BYTES + Buffer.byteLength(text) > MAX_BATCH_BODY_BYTES) return ['line too long for one request'];
  try {
    await pipe.transform(parseIJson(text, ITEM_DEPTH), asEventBody);
    return [];
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'VALIDATION_ERROR') throw error;
    return messagesOf(error, text);
  }
}

function messagesOf(error: AppError, text: string): string[] {
  const fields = (error.details.fields ?? []) as { field: string; message: string }[];
  return fields.map(({ field, message }) => {
    if (field !== 'body') return `${field}: ${message}`;
    if (message === 'body must be a JSON object') return 'not a JSON object';
    return message === 'body is not valid JSON' ? `not JSON (${syntaxError(text)})` : message;
  });
}

function syntaxError(text: string): string {
  try {
    JSON.parse(text);
    return 'unknown';
  } catch (error) {
    return (error as Error).message;
  }
}
