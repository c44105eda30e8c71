// Transitions are single statements, but two of them can still deadlock on counter
// rows (Postgres aborts one). Such an abort changed nothing, so it is retried.
const RETRYABLE = new Set(['40P01', '40001']);

export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (i >= attempts || !code || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 5 * i + Math.random() * 20));
    }
  }
}
