/** One validated event waiting to be appended. */
export interface AppendRequest {
  accountId: string;
  chainName: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  /** When set, the response is stored under this key in the event's own transaction. */
  idempotencyKey: string | null;
}
