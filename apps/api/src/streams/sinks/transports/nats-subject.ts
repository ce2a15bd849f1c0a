/** A subject to publish to: dot-separated tokens, no wildcard, no whitespace (NATS docs, "Subject-Based Messaging"). */
const SUBJECT = /^[^.*>\s]+(\.[^.*>\s]+)*$/;
/** A subject, in characters: far below the server's max_payload, long enough for any naming scheme. */
export const MAX_SUBJECT_LENGTH = 256;

/** The subject of a `nats://host:port/<subject>` URL, or null when its path is not one. */
export function natsSubjectOf(url: URL): string | null {
  let subject: string;
  try {
    subject = decodeURIComponent(url.pathname.slice(1));
  } catch {
    return null;
  }
  return subject.length <= MAX_SUBJECT_LENGTH && SUBJECT.test(subject) ? subject : null;
}
