import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppError, CHAIN_ID, CHAINS_CURSOR } from '@app/common';
import { ChainEntity } from '@app/database';
import { toChainView } from './chain.mapper';
import { ChainView } from './dto/chain.view';
import { ListChainsQuery } from './dto/list-chains.query';

@Injectable()
export class ChainsService {
  constructor(@InjectRepository(ChainEntity) private readonly chains: Repository<ChainEntity>) {}

  /** Oldest first by (createdAt, id), an index range scan on ix_chains_account_created. */
  async list(accountId: string, query: ListChainsQuery): Promise<{ data: ChainView[]; nextCursor?: string }> {
    const qb = this.chains.createQueryBuilder('c').where('c.account_id = :accountId', { accountId });
    if (query.name !== undefined) qb.andWhere('c.name = :name', { name: query.name });
    if (query.cursor) {
      const key = CHAINS_CURSOR.decode(query.cursor);
      qb.andWhere('(c.created_at, c.id) > (:cursorTime, :cursorId)', { cursorTime: key.time, cursorId: key.id });
    }
    const rows = await qb
      .orderBy('c.created_at', 'ASC')
      .addOrderBy('c.id', 'ASC')
      .limit(query.limit + 1)
      .getMany();
    const page = CHAINS_CURSOR.page(rows, query.limit, (c) => ({ time: c.createdAt.toISOString(), id: c.id }));
    return { data: page.items.map(toChainView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /** One chain of this account; unknown, malformed and foreign ids are the same 404. */
  async status(accountId: string, chainId: string): Promise<{ data: ChainView }> {
    const chain = CHAIN_ID.test(chainId) ? await this.chains.findOneBy({ id: chainId, accountId }) : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    return { data: toChainView(chain) };
  }
}
