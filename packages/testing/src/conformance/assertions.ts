import { waitUntil as poll } from '../wait';

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

/** Waits for `check` to return something other than undefined, or throws at the deadline. */
export async function waitUntil<T>(
  description: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  return (await poll(`conformance: ${description}`, check, { timeoutMs, intervalMs: 50 })) as T;
}
