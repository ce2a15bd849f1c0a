import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';

/** A webhook's signing secret; `until` null for the current one, else when a rotated-out one stops being sent. */
export interface WebhookSecret {
  secret: string;
  until: string | null;
}

/** A destination's credentials as sealed in `destinations.secrets` (the engine opens them to deliver). */
export interface DestinationCredentials {
  /** Newest first: after a rotation the old one is also signed with until its `until`. */
  webhookSecrets?: WebhookSecret[];
  token?: string;
  apiKey?: string;
  headers: Record<string, string>;
}

/** How long a rotated-out webhook secret still signs (docs/contract.md §16: both signatures for 24 hours). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The secrets after a rotation: `secret` first, the previous current one until now + 24 h, and no
 * other: "both signatures" (docs/contract.md §16) are the new one's and the previous one's, so a
 * tenant who rotates in a loop makes every request carry two signatures, not one per rotation (P8).
 */
export function rotated(secrets: readonly WebhookSecret[], secret: string, now: Date): WebhookSecret[] {
  const until = new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString();
  const current = secrets.filter((s) => s.until === null).map((s) => ({ ...s, until }));
  return [{ secret, until: null }, ...current];
}

/** Seals and opens credentials with the destination's id as additional data (a sealed value moved to another row does not open). */
export const sealCredentials = (box: SecretBox, destinationId: string, credentials: DestinationCredentials): Buffer =>
  box.seal(destinationId, credentials);

export const openCredentials = (box: SecretBox, destinationId: string, sealed: Buffer): DestinationCredentials =>
  box.open<DestinationCredentials>(destinationId, sealed);

/** The webhook secrets that still sign at `now`, newest first. */
export function signingSecrets(credentials: DestinationCredentials, now: Date): string[] {
  return (credentials.webhookSecrets ?? [])
    .filter(({ until }) => until === null || Date.parse(until) > now.getTime())
    .map(({ secret }) => secret);
}

/**
 * The credentials to change: the stored ones, or none when they no longer open (SECRETS_KEY was
 * changed or lost). docs/contract.md §16: such destinations are given their credentials again, so a change
 * or a rotation must not fail on the old ones, which nothing can use any more.
 */
export function credentialsToChange(box: SecretBox, destinationId: string, sealed: Buffer): DestinationCredentials {
  try {
    return openCredentials(box, destinationId, sealed);
  } catch {
    return { headers: {} };
  }
}
