import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { CHAIN_NAME, CHAIN_NAME_TEXT, PageQueryDto } from '@app/common';

/** GET /v1/chains: `limit`, `cursor` and an exact `name` (the same rules as an event's `chain`). */
export class ListChainsQuery extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Exact chain name', pattern: CHAIN_NAME.source })
  @IsOptional()
  @IsString()
  @Matches(CHAIN_NAME, { message: `name must be ${CHAIN_NAME_TEXT}` })
  name?: string;
}
