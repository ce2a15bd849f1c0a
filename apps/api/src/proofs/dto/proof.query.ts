import { TreeSize } from './tree-size.decorator';

/** GET /v1/events/:id/proof */
export class InclusionProofQuery {
  @TreeSize(
    'size',
    'The tree size to prove inclusion in (position ≤ size ≤ the chain’s size); default the chain’s size',
    false,
  )
  size?: number;
}

/** GET /v1/chain/:chainId/consistency */
export class ConsistencyProofQuery {
  @TreeSize('from', 'The older tree size (0 ≤ from ≤ to)', true)
  from!: number;

  @TreeSize('to', 'The newer tree size (from ≤ to ≤ the chain’s size)', true)
  to!: number;
}
