import { Injectable } from '@nestjs/common';
import { AppError, CHAIN_ID, CHAINS_CURSOR } from '@app/common';
import { ChainsRepository } from '@app/database';
import { toChainView } from './chain.mapper';
import { ChainView } from './dto/chain.view';
import { ListChainsQuery } from './dto/list-chains.query';

@Injectable()
export class ChainsService {
  constructor(private readonly chains: ChainsRepository) {}

  /** Oldest first by (createdAt, id), an index range scan on ix_chains_account_created. */
  async list(accountId: string, query: ListChainsQuery): Promise<{ data: ChainView[]; nextCursor?: string }> {
    const rows = await this.chains.list(
      accountId,
      { name: query.name },
      query.limit + 1,
      query.cursor ? CHAINS_CURSOR.decode(accountId, query.cursor) : undefined,
    );
    const page = CHAINS_CURSOR.page(accountId, rows, query.limit, (c) => ({
      time: c.createdAt.toISOString(),
      id: c.id,
    }));
    return { data: page.items.map(toChainView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /** One chain of this account; unknown, malformed and foreign ids are the same 404. */
  async status(accountId: string, chainId: string): Promise<{ data: ChainView }> {
    const chain = CHAIN_ID.test(chainId) ? await this.chains.findOwned(accountId, chainId) : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    return { data: toChainView(chain) };
  }
}
