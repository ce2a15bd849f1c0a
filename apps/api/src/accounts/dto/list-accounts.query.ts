import { PageQueryDto } from '@app/common';

/** GET /v1/accounts: `limit` and `cursor`, oldest first. */
export class ListAccountsQuery extends PageQueryDto {}
