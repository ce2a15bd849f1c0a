import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { PageQueryDto } from '@app/common';

/** GET /v1/chains: `limit`, `cursor` and an exact `name` (the same rules as an event's `chain`). */
export class ListChainsQuery extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Exact chain name', pattern: '^[A-Za-z0-9._:-]{1,128}$' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9._:-]{1,128}$/, { message: 'name must be 1-128 characters of A-Z a-z 0-9 . _ : -' })
  name?: string;
}
