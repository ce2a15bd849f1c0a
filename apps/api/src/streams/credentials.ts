/**
 * A destination's credentials as sealed in `destinations.secrets` (SecretBox, keyed by the
 * destination's id): the only place they exist in the clear is this object, in memory.
 */
export interface DestinationCredentials {
  /** A webhook's signing secrets (`whsec_…`), newest first; an older one signs until `until` (a rotation's 24 h). */
  webhookSecrets?: { secret: string; until: string | null }[];
  /** splunk_hec's HEC token. */
  token?: string;
  /** datadog's API key. */
  apiKey?: string;
  /** Custom headers sent with every request; their values count as credentials. */
  headers: Record<string, string>;
}

/** The webhook secrets that still sign at `now`, newest first. */
export function signingSecrets(credentials: DestinationCredentials, now: Date): string[] {
  return (credentials.webhookSecrets ?? [])
    .filter(({ until }) => until === null || Date.parse(until) > now.getTime())
    .map(({ secret }) => secret);
}
