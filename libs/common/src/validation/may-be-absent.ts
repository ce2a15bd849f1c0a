import { ValidateIf } from 'class-validator';

/**
 * An optional body member that, when present, must pass its rules: `null` included. class-validator's
 * IsOptional skips `null` as well as absence, which let `"overlapSeconds": null` through a member
 * described as an integer (issue 26 item 11). Use IsOptional only where null means something.
 */
export function MayBeAbsent(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
