import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_CURSOR_LENGTH, MAX_PAGE_SIZE } from '../limits';
import { DecimalInteger } from '../validation/decimal-integer';

const LIMIT_MESSAGE = `limit must be an integer between 1 and ${MAX_PAGE_SIZE}`;

/** `limit` and `cursor`, shared by every list endpoint. */
export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @DecimalInteger()
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(MAX_PAGE_SIZE, { message: LIMIT_MESSAGE })
  limit: number = DEFAULT_PAGE_SIZE;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page', maxLength: MAX_CURSOR_LENGTH })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CURSOR_LENGTH)
  cursor?: string;
}
