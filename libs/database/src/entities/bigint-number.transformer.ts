import { ValueTransformer } from 'typeorm';

/** pg returns int8 as a string; positions and counts stay far below 2^53. */
export const bigintAsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};
