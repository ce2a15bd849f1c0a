import { PageQueryDto } from '@app/common';

/** GET /v1/accounts/:accountId/keys: `limit` and `cursor`, oldest first. */
export class ListKeysQuery extends PageQueryDto {}
