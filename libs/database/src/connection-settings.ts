/**
 * What every connection to PostgreSQL opens with: the pool's, the read replica's, whole-chain
 * verification's workers'. A host that stops answering without closing its connections (a machine
 * or a network path gone, not a PostgreSQL restart) is found by TCP keepalive probes from 10 s of
 * silence on, instead of the kernel's two hours: a read waiting on a dropped replica fails and is
 * retried on another host instead of hanging until TCP gives up (threat model P11).
 */
export const CONNECTION_SETTINGS = {
  connectionTimeoutMillis: 5000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
} as const;
