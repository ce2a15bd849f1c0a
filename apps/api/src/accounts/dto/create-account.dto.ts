import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { ACCOUNT_NAME, ACCOUNT_NAME_TEXT } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';

/** Body of POST /v1/accounts. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateAccountDto {
  @ApiProperty({ description: `Unique: ${ACCOUNT_NAME_TEXT}`, pattern: ACCOUNT_NAME.source, example: 'globex' })
  @IsString()
  @Matches(ACCOUNT_NAME, { message: `name must be ${ACCOUNT_NAME_TEXT}` })
  name!: string;
}
