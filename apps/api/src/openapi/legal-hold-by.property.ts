import { ApiProperty } from '@nestjs/swagger';
import type { LegalHoldBy } from '@app/database';

/** Who placed a view's legal hold (docs/contract.md §14), null when not held. */
export type LegalHoldByView = LegalHoldBy | null;

/**
 * The `legalHoldBy` member of a view of something held (an account, a chain): `whose` names the hold
 * (`the account’s`, `the chain’s own`).
 */
export const ApiLegalHoldBy = (whose: string): PropertyDecorator =>
  ApiProperty({
    type: String,
    enum: ['operator', 'admin', null],
    nullable: true,
    description: `Who placed ${whose} hold: an \`operator\` key’s hold is lifted only by an operator key; null when not held`,
  });
