import { applyDecorators } from '@nestjs/common';
import { IsInt, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { NO_CONTROL_CHARACTERS, PRINTABLE_ASCII } from '../../../common/text-patterns';
import { MAX_DESTINATION_URL_LENGTH } from '../../sinks';
import {
  MAX_BATCH_SIZE,
  MAX_CREDENTIAL_LENGTH,
  MAX_DESTINATION_NAME_LENGTH,
  MAX_OPTION_LENGTH,
  MAX_TIMEOUT_SECONDS,
} from '../destination-kinds';

/**
 * The rules of each field both the create and the change bodies take, once: the two DTOs differ
 * only in which fields are required and what null means.
 */
export const DestinationRules = {
  name: () =>
    applyDecorators(
      IsString(),
      MinLength(1),
      MaxLength(MAX_DESTINATION_NAME_LENGTH),
      Matches(NO_CONTROL_CHARACTERS, { message: 'name must not contain control characters' }),
    ),
  url: () => applyDecorators(IsString(), MinLength(1), MaxLength(MAX_DESTINATION_URL_LENGTH)),
  batchSize: () => integer('batchSize', 1, MAX_BATCH_SIZE),
  timeoutSeconds: () => integer('timeoutSeconds', 1, MAX_TIMEOUT_SECONDS),
  credential: (field: string) => printable(field, MAX_CREDENTIAL_LENGTH),
  option: (field: string) => printable(field, MAX_OPTION_LENGTH),
};

function integer(field: string, min: number, max: number) {
  const message = `${field} must be an integer from ${min} to ${max}`;
  return applyDecorators(IsInt({ message }), Min(min, { message }), Max(max, { message }));
}

function printable(field: string, max: number) {
  const message = `${field} must be 1 to ${max} printable ASCII characters, without spaces`;
  return applyDecorators(IsString(), MaxLength(max, { message }), Matches(PRINTABLE_ASCII, { message }));
}
