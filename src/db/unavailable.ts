// Whether an error means the database could not be reached (down, restarting, refusing
// connections, or no route to it), as opposed to an answer it gave: the API turns these
// into a temporary 503, and a runner tries again to record an outcome.

export function databaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'ETIMEDOUT', 'EPIPE', 'ENETUNREACH', 'EHOSTUNREACH', '57P01', '57P02', '57P03'].includes(code) ||
    code.startsWith('08') ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/.test(message)
  );
}
