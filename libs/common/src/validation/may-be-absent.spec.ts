import 'reflect-metadata';
import { ArgumentMetadata } from '@nestjs/common';
import { IsInt, IsOptional } from 'class-validator';
import { AppError } from '../errors';
import { MayBeAbsent } from './may-be-absent';
import { createValidationPipe } from './validation-pipe';

class Body {
  @MayBeAbsent()
  @IsInt({ message: 'n must be an integer' })
  n?: number;

  @IsOptional()
  @IsInt()
  nullable?: number | null;
}

const body: ArgumentMetadata = { type: 'body', metatype: Body };

describe('MayBeAbsent', () => {
  it('lets an absent member through, validates a present one', async () => {
    const sut = createValidationPipe();
    await expect(sut.transform({}, body)).resolves.toBeInstanceOf(Body);
    await expect(sut.transform({ n: 3 }, body)).resolves.toMatchObject({ n: 3 });
  });

  it('refuses null where IsOptional lets it through: a 400 naming the member', async () => {
    const sut = createValidationPipe();
    await expect(sut.transform({ nullable: null }, body)).resolves.toBeInstanceOf(Body);
    const refused: unknown = await sut.transform({ n: null }, body).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).details).toEqual({ fields: [{ field: 'n', message: 'n must be an integer' }] });
  });
});
