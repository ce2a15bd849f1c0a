// Without Nest or TypeORM: whole-chain verification's worker threads import it too.
/**
 * Failures of a read on the replica that the primary would not have: the replica unreachable or
 * restarting (classes 08, 57P), a query cancelled by a conflict with recovery (40001), a socket
 * error. Such a read runs again on the primary; a timeout (57014) or a bad query does not.
 */
export function replicaTrouble(error: unknown): boolean {
  // SQLSTATEs and socket errors (ECONNREFUSED…) alike.
  const raw = (error as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : '';
  if (/^(08|57P)/.test(code) || code === '40001' || /^E[A-Z]+$/.test(code)) return true;
  return error instanceof Error && /Connection terminated|connection error/i.test(error.message);
}
