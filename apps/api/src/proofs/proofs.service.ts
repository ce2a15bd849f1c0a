import { Injectable } from '@nestjs/common';
import { AppError, CHAIN_ID } from '@app/common';
import { ChainsRepository, MerkleNodesRepository } from '@app/database';
import {
  assemble,
  consistencyPlan,
  emptyRoot,
  inclusionPlan,
  MerklePlan,
  NodeId,
  NodeReader,
  rootPlan,
} from '@app/hashing';
import { ConsistencyProofQuery, InclusionProofQuery } from './dto/proof.query';
import { ConsistencyProofView, InclusionProofView } from './dto/proof.view';

const hex = (hash: Buffer): string => hash.toString('hex');

/**
 * Inclusion and consistency proofs (contract §10), from the stored tree. An inclusion proof is one
 * statement (the event, its chain's size and the nodes it can need); a consistency proof two (the
 * chain, then every node of the proof and both roots). Nodes of a size the chain has reached never
 * change, so no transaction is needed between the two.
 */
@Injectable()
export class ProofsService {
  constructor(
    private readonly chains: ChainsRepository,
    private readonly nodes: MerkleNodesRepository,
  ) {}

  async inclusion(
    accountId: string,
    eventId: string,
    query: InclusionProofQuery,
  ): Promise<{ data: InclusionProofView }> {
    const facts = await this.nodes.inclusion(accountId, eventId, query.size ?? null);
    if (!facts) throw AppError.notFound(`Event ${eventId}`);
    const { chainId, position, size } = facts;
    if (size < position || size > facts.chainSize)
      throw outOfRange(
        'size',
        `size must be between the event's position (${position}) and the chain's size (${facts.chainSize})`,
      );
    const stored = (id: NodeId): Buffer =>
      facts.nodes.find((n) => n.level === id.level && n.index === id.index)?.hash ?? missing(chainId, id);
    const proofPlan = inclusionPlan(position - 1, size);
    const treePlan = rootPlan(size);
    const proof = assemble(proofPlan, proofPlan.nodes.map(stored));
    const [root] = assemble(treePlan, treePlan.nodes.map(stored));
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
    const chain = CHAIN_ID.test(chainId) ? await this.chains.findOwned(accountId, chainId) : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    if (to > chain.lastPosition) throw outOfRange('to', `to must not exceed the chain's size (${chain.lastPosition})`);
    if (from > to) throw outOfRange('from', `from must not exceed to (${to})`);
    const plans = [consistencyPlan(from, to), ...(from > 0 ? [rootPlan(from)] : []), ...(to > 0 ? [rootPlan(to)] : [])];
    const [proof, ...roots] = await resolve(plans, this.nodes.reader(chain.id));
    const fromRoot = from > 0 ? roots.shift()![0]! : emptyRoot();
    const toRoot = to > 0 ? roots.shift()![0]! : emptyRoot();
    return {
      data: { chainId: chain.id, from, to, fromRoot: hex(fromRoot), toRoot: hex(toRoot), proof: proof!.map(hex) },
    };
  }
}

const key = (id: NodeId): string => `${id.level}/${id.index}`;

function missing(chainId: string, id: NodeId): never {
  throw new Error(`chain ${chainId} lacks Merkle node (${id.level}, ${id.index})`);
}

function outOfRange(field: string, message: string): AppError {
  return AppError.validation([{ field, message }]);
}

/** Several plans' hashes with one read of all their (distinct) nodes. */
async function resolve(plans: readonly MerklePlan[], read: NodeReader): Promise<Buffer[][]> {
  const ids = new Map<string, NodeId>();
  for (const plan of plans) for (const id of plan.nodes) ids.set(key(id), id);
  const wanted = [...ids.values()];
  const hashes = wanted.length === 0 ? [] : await read(wanted);
  const byKey = new Map(wanted.map((id, i) => [key(id), hashes[i]!]));
  return plans.map((plan) =>
    assemble(
      plan,
      plan.nodes.map((id) => byKey.get(key(id))!),
    ),
  );
}
