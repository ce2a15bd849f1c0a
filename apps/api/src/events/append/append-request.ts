/** One validated event waiting to be appended: what it brings to its row, as a plain record. */
export interface AppendRequest {
  accountId: string;
  chainName: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
}
