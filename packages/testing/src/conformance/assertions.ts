/** Missing and extra ids, reported separately; `extra` includes ids present more than once. */
export function diffIds(
  expected: readonly string[],
  actual: readonly string[],
): { missing: string[]; extra: string[] } {
  const want = new Set(expected);
  const seen = new Set<string>();
  const extra: string[] = [];
  for (const id of actual) {
    if (!want.has(id) || seen.has(id)) extra.push(id);
    seen.add(id);
  }
  return { missing: expected.filter((id) => !seen.has(id)), extra };
}

/** Polls `check` until it returns something other than undefined, or throws at the deadline. */
export async function waitUntil<T>(
  description: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`conformance: timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
