import { Http } from '../http';
import { everyItem } from '../pages';
import type { Chain, ChainFilters, ChainVerification, ConsistencyProof, Witness, WitnessedCheckpoint } from '../types';

/** /v1/chains and /v1/chain/:chainId: status, verification, checkpoints, proofs, witnessing (§4, §10, §18). */
export class ChainsResource {
  constructor(private readonly http: Http) {}

  /** Every chain of the account, oldest first, over as many pages as it takes. */
  list(filters: ChainFilters = {}): AsyncGenerator<Chain> {
    return everyItem(
      async (cursor) => (await this.http.call('get', '/v1/chains', { query: { ...filters, cursor } })).body,
    );
  }

  async status(chainId: string): Promise<Chain> {
    return (await this.http.call('get', '/v1/chain/{chainId}/status', { path: { chainId } })).body.data;
  }

  /** Whole-chain verification, done by the service. */
  async verify(chainId: string): Promise<ChainVerification> {
    return (await this.http.call('get', '/v1/chain/{chainId}/verify', { path: { chainId } })).body.data;
  }

  /** The chain's latest signed checkpoint: a C2SP signed note, as text. */
  async checkpoint(chainId: string): Promise<string> {
    return (await this.http.raw('get', '/v1/chain/{chainId}/checkpoint', { path: { chainId } })).text();
  }

  /** The consistency proof from the tree of `from` events to the tree of `to` (§10). */
  async consistency(chainId: string, from: number, to: number): Promise<ConsistencyProof> {
    return (await this.http.call('get', '/v1/chain/{chainId}/consistency', { path: { chainId }, query: { from, to } }))
      .body.data;
  }

  /** The chain's latest checkpoint that a witnessed log checkpoint includes (§18); 404 while none is. */
  async witnessedCheckpoint(chainId: string): Promise<WitnessedCheckpoint> {
    return (await this.http.call('get', '/v1/chain/{chainId}/checkpoint/witnessed', { path: { chainId } })).body.data;
  }
}

/** The deployment's keys and logs: what verifiers pin (§10, §18). */
export class TransparencyResource {
  constructor(private readonly http: Http) {}

  /** The verifier key of checkpoints (no API key needed). Pin it out of band; this is for a first look. */
  async checkpointKey(): Promise<string> {
    return (await (await this.http.raw('get', '/v1/checkpoint-key')).text()).trim();
  }

  /** The latest checkpoint of the checkpoint log, with its cosignatures (a signed note). */
  async checkpointLog(): Promise<string> {
    return (await this.http.raw('get', '/v1/checkpoint-log')).text();
  }

  async witnesses(): Promise<Witness[]> {
    return (await this.http.call('get', '/v1/witnesses')).body.data;
  }
}
