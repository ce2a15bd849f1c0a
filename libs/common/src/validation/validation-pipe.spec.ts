import 'reflect-metadata';
import { ArgumentMetadata } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString } from 'class-validator';
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

class Body {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  optional?: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  nullable?: string | null;

  @ApiProperty()
  @IsInt()
  required!: number;
}

class PartialBody extends PartialType(Body, { skipNullProperties: false }) {}

describe('validation pipe, null in a body (issue 37 item 10)', () => {
  const body = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });
  const fieldsOf = async (value: object, metatype: ArgumentMetadata['metatype'] = Body) => {
    try {
      await createValidationPipe().transform(value, body(metatype));
    } catch (e) {
      return (e as AppError).details.fields;
    }
    return 'accepted';
  };

  it('refuses null for a member its description does not call nullable, even one IsOptional would skip', async () => {
    expect(await fieldsOf({ optional: null, required: null })).toEqual([
      { field: 'optional', message: 'optional must not be null' },
      { field: 'required', message: 'required must not be null' },
    ]);
  });

  it('accepts null where the description says nullable, also in a mapped type', async () => {
    expect(await fieldsOf({ nullable: null, required: 1 })).toBe('accepted');
    expect(await fieldsOf({ nullable: null }, PartialBody)).toBe('accepted');
    expect(await fieldsOf({ optional: null }, PartialBody)).toEqual([
      { field: 'optional', message: 'optional must not be null' },
    ]);
  });

  it('leaves an unknown member null to the whitelist', async () => {
    expect(await fieldsOf({ required: 1, other: null })).toEqual([
      { field: 'other', message: "unknown field 'other'" },
    ]);
  });
});
