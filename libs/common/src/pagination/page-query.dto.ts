import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** `limit` and `cursor`, shared by every list endpoint. */
export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer between 1 and 200' })
  @Min(1, { message: 'limit must be an integer between 1 and 200' })
  @Max(MAX_PAGE_SIZE, { message: 'limit must be an integer between 1 and 200' })
  limit: number = DEFAULT_PAGE_SIZE;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
