/**
 * An event as GET /v1/events/export?format=json writes it (the spec's export fields, in this
 * order, values as stored): the wire format the service writes and the offline verifier reads.
 */
export interface ExportedEvent {
  id: string;
  timestamp: string;
  /** Null once erased (docs/contract.md §17). */
  actor: string | null;
  action: string;
  resource: string | null;
  chain: { id: string; name: string; position: number };
  hash: string;
  previousHash: string;
  context: Record<string, unknown> | null;
}

/**
 * What a JSON export says of a chain that retention pruned (docs/contract.md §14), in its header's
 * `pruned`: the last pruned event's position, hash and timestamp, and the Merkle nodes the service
 * kept over positions 1…lastPosition − 1 (`frontierIds(lastPosition − 1)`, left to right). Nothing
 * here is signed: the offline verifier uses it only to recompute the root of a signed checkpoint,
 * which then confirms it (the kept hash included, as the tree's leaf at lastPosition).
 */
export interface ExportedPrunedChain {
  chainId: string;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: string;
  nodes: { level: number; index: number; hash: string }[];
}
