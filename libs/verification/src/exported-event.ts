/**
 * An event as GET /v1/events/export?format=json writes it (the spec's export fields, in this
 * order, values as stored): the wire format the service writes and the offline verifier reads.
 */
export interface ExportedEvent {
  id: string;
  timestamp: string;
  actor: string;
  action: string;
  resource: string | null;
  chain: { id: string; name: string; position: number };
  hash: string;
  previousHash: string;
  context: Record<string, unknown> | null;
}
