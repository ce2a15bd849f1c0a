/** The API's shapes the console reads (contract §4, §10, §12, §13). */
export interface Event {
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

export interface Page<T> {
  data: T[];
  nextCursor?: string;
}

export interface Chain {
  id: string;
  name: string;
  lastHash: string;
  lastPosition: number;
  eventCount: number;
  createdAt: string;
}

export interface VerificationResult {
  valid: boolean;
  errors: string[];
  eventHash: string;
  computedHash: string;
  chainIntact: boolean;
  verifiedAt: string;
}

export interface ChainVerification {
  valid: boolean;
  chainId: string;
  checkedEvents: number;
  lastPosition: number;
  firstInvalidPosition: number | null;
  checkpointsChecked: number;
  errors: { position: number; eventId: string | null; message: string }[];
  errorCount: number;
  errorsTruncated: boolean;
  verifiedAt: string;
}

export interface StatsAnswer {
  data: { key: string | null; count: number }[];
  total: number;
}

export type Scope = 'ingest' | 'read' | 'admin' | 'operator';

export interface Me {
  accountId: string;
  accountName: string;
  keyId: string;
  scopes: Scope[];
}

export interface Account {
  id: string;
  name: string;
  createdAt: string;
  eventCount: number;
  chainCount: number;
  lastEventAt: string | null;
  keyCount: number;
}

export interface Key {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export type NewKey = Key & { secret: string };
