/** The Event resource on the wire (spec §2). */
export interface EventView {
  id: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  chain: { id: string; name: string; position: number };
  hash: string;
  previousHash: string;
  timestamp: string;
  createdAt: string;
}
