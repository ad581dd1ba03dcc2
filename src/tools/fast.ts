/**
 * One round trip for the usual case of a write: `fast` builds a single batch
 * whose guards (each failing with `miss`) state what the usual case assumes,
 * and reads what the result needs at its end. When a guard fails the batch
 * has rolled back, and `slow` — the read → decide → commit path — finds the
 * exact answer: a no-op, the precise error, or the write on what it read.
 */
export async function fastOr<R>(fast: (miss: Error) => Promise<R>, slow: () => Promise<R>): Promise<R> {
  const miss = new Error("the usual case does not hold");
  try {
    return await fast(miss);
  } catch (e) {
    if (e !== miss) throw e;
    return slow();
  }
}

/** The rows a statement of a batch returned. */
export function rowsOf<T>(results: D1Result[], i: number): T[] {
  return (results.at(i)?.results ?? []) as T[];
}
