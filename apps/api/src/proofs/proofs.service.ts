import { Injectable } from '@nestjs/common';
import { AppConfig, AppError, CHAIN_ID } from '@app/common';
import { Db, MerkleNodesRepository, ReadReplica } from '@app/database';
import { assembleAll, consistencyPlan, emptyRoot, inclusionPlan, NodeId, rootPlan } from '@app/hashing';
import { ConsistencyProofQuery, InclusionProofQuery } from './dto/proof.query';
import { ConsistencyProofView, InclusionProofView } from './dto/proof.view';

const hex = (hash: Buffer): string => hash.toString('hex');

/**
 * Inclusion and consistency proofs (docs/contract.md §10), from the stored tree, each with one statement:
 * the event or chain, its size, and the nodes the proof and its roots need (planned first from the
 * sizes asked; for an inclusion proof, in SQL from the event's position). Nodes of a size the chain
 * has reached never change, so a proof needs no transaction. After a prune (docs/contract.md §14) the tree
 * keeps what proofs of retained events need: inclusion proofs work at every size from the first
 * retained position, and a consistency proof from or to a smaller size (other than 0) is 410 PRUNED.
 * With DATABASE_READ_URL, a proof may be read on the replica once it has replayed what the primary
 * had when the request came (ReadReplica): a proof of an event just acknowledged never answers 404,
 * and a chain is never shorter than the client last saw it.
 */
@Injectable()
export class ProofsService {
  constructor(
    private readonly nodes: MerkleNodesRepository,
    private readonly reads: ReadReplica,
    private readonly config: AppConfig,
  ) {}

  /** A proof's one statement, on the replica when it may serve it (under QUERY_TIMEOUT_SECONDS there), else on the primary. */
  private read<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.reads.runShort(this.config.queryTimeoutSeconds * 1000, work);
  }

  async inclusion(
    accountId: string,
    eventId: string,
    query: InclusionProofQuery,
  ): Promise<{ data: InclusionProofView }> {
    const facts = await this.read((db) => this.nodes.inclusion(accountId, eventId, query.size ?? null, db));
    if (!facts) throw AppError.notFound(`Event ${eventId}`);
    const { chainId, position, size } = facts;
    if (size < position || size > facts.chainSize)
      throw outOfRange(
        'size',
        `size must be between the event's position (${position}) and the chain's size (${facts.chainSize})`,
      );
    const stored = (id: NodeId): Buffer =>
      facts.nodes.find((n) => n.level === id.level && n.index === id.index)?.hash ?? missing(chainId, id);
    const plans = [inclusionPlan(position - 1, size), rootPlan(size)];
    const [proof, [root]] = assembleAll(
      plans,
      plans.flatMap((plan) => plan.nodes.map(stored)),
    ) as [Buffer[], Buffer[]];
    return {
      data: {
        chainId,
        position,
        leafIndex: position - 1,
        size,
        eventHash: facts.hash,
        rootHash: hex(root!),
        proof: proof.map(hex),
      },
    };
  }

  async consistency(
    accountId: string,
    chainId: string,
    { from, to }: ConsistencyProofQuery,
  ): Promise<{ data: ConsistencyProofView }> {
    const plans =
      from > to
        ? []
        : [consistencyPlan(from, to), ...(from > 0 ? [rootPlan(from)] : []), ...(to > 0 ? [rootPlan(to)] : [])];
    const ids = plans.flatMap((plan) => plan.nodes);
    const chain = CHAIN_ID.test(chainId)
      ? await this.read((db) => this.nodes.chainNodes(accountId, chainId, ids, to, db))
      : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    if (to > chain.size) throw outOfRange('to', `to must not exceed the chain's size (${chain.size})`);
    if (from > to) throw outOfRange('from', `from must not exceed to (${to})`);
    const pruned = [from, to].find((size) => size > 0 && size < chain.firstPosition);
    if (pruned !== undefined)
      throw new AppError(
        'PRUNED',
        `Size ${pruned} is below the chain's first retained position (${chain.firstPosition}): retention pruned the events a proof from or to it needs.`,
        { firstPosition: chain.firstPosition },
      );
    if (chain.hashes.length !== ids.length)
      throw new Error(`chain ${chain.chainId} lacks Merkle node(s) of a proof from ${from} to ${to}`);
    const [proof, ...roots] = assembleAll(plans, chain.hashes);
    const fromRoot = from > 0 ? roots.shift()![0]! : emptyRoot();
    const toRoot = to > 0 ? roots.shift()![0]! : emptyRoot();
    return {
      data: { chainId: chain.chainId, from, to, fromRoot: hex(fromRoot), toRoot: hex(toRoot), proof: proof!.map(hex) },
    };
  }
}

function missing(chainId: string, id: NodeId): never {
  throw new Error(`chain ${chainId} lacks Merkle node (${id.level}, ${id.index})`);
}

function outOfRange(field: string, message: string): AppError {
  return AppError.validation([{ field, message }]);
}
