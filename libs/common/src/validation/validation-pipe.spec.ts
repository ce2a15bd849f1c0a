import 'reflect-metadata';
import { ArgumentMetadata } from '@nestjs/common';
import { IsInt, IsOptional } from 'class-validator';
import { AppError } from '../errors';
import { DEFAULT_PAGE_SIZE } from '../limits';
import { PageQueryDto } from '../pagination';
import { createValidationPipe } from './validation-pipe';

class RequiredQuery {
  @IsInt()
  n!: number;
}

class OptionalQuery {
  @IsOptional()
  @IsInt()
  n?: number;
}

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype });

describe('validation pipe, empty query strings', () => {
  it.each([
    ['optional members', OptionalQuery, { n: undefined }],
    ['a default', PageQueryDto, { limit: DEFAULT_PAGE_SIZE, cursor: undefined }],
  ])('on a DTO with %s: the same members every time, in a fresh instance', async (_, metatype, members) => {
    const pipe = createValidationPipe();
    const first: unknown = await pipe.transform({}, query(metatype));
    const again: unknown = await pipe.transform({}, query(metatype));
    for (const dto of [first, again]) {
      expect(dto).toBeInstanceOf(metatype);
      expect({ ...(dto as object) }).toStrictEqual(members);
    }
    expect(again).not.toBe(first);
  });

  it('on a DTO an empty query fails: the 400 every time', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 2; i++) await expect(pipe.transform({}, query(RequiredQuery))).rejects.toBeInstanceOf(AppError);
  });

  it('a query with parameters is still validated after an empty one passed', async () => {
    const pipe = createValidationPipe();
    await pipe.transform({}, query(OptionalQuery));
    await expect(pipe.transform({ n: 'x' }, query(OptionalQuery))).rejects.toBeInstanceOf(AppError);
    await expect(pipe.transform({ other: '1' }, query(OptionalQuery))).rejects.toBeInstanceOf(AppError);
  });
});
