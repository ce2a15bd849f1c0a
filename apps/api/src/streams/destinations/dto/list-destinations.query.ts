import { PageQueryDto } from '@app/common';

/** GET /v1/accounts/:accountId/destinations: `limit` and `cursor`, oldest first. */
export class ListDestinationsQuery extends PageQueryDto {}
