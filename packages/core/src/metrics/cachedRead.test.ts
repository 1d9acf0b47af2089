import { CachedRead, type ReadFailure } from './cachedRead';

/** A read the test resolves or rejects by hand, counting how often it started. */
function manualRead() {
  const calls: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
  const read = () =>
    new Promise<number>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { calls, read };
}

function reader(read: () => Promise<number>, options: { timeoutMs?: number; cacheMs?: number } = {}) {
  let clock = 0;
  const failures: ReadFailure[] = [];
  const cached = new CachedRead(read, {
    timeoutMs: options.timeoutMs ?? 60_000,
    cacheMs: options.cacheMs ?? 1_000,
    onFailure: (failure) => void failures.push(failure),
    now: () => clock,
  });
  return { cached, failures, advance: (ms: number) => void (clock += ms) };
}

describe('CachedRead', () => {
  it('shares one read between concurrent callers and reuses its value within cacheMs', async () => {
    let reads = 0;
    const { cached, advance } = reader(async () => ++reads, { cacheMs: 1_000 });
    expect(await Promise.all([cached.current(), cached.current(), cached.current()])).toEqual([1, 1, 1]);
    advance(999);
    expect(await cached.current()).toBe(1);
    advance(1);
    expect(await cached.current()).toBe(2);
    expect(reads).toBe(2);
  });

  it('reads on every call with cacheMs 0', async () => {
    let reads = 0;
    const { cached } = reader(async () => ++reads, { cacheMs: 0 });
    await cached.current();
    await cached.current();
    expect(reads).toBe(2);
  });

  it('answers a hung read with the last value after timeoutMs, never starts a second read while it hangs, and takes its late value', async () => {
    const manual = manualRead();
    const { cached, failures } = reader(manual.read, { timeoutMs: 20, cacheMs: 0 });
    const first = cached.current();
    manual.calls[0]?.resolve(7);
    expect(await first).toBe(7);

    expect(await cached.current()).toBe(7); // the second read hangs: the last value, after the deadline
    expect(await cached.current()).toBe(7); // still hanging: no third read
    expect(manual.calls).toHaveLength(2);
    expect(failures).toEqual(['timeout', 'timeout']);

    manual.calls[1]?.resolve(8);
    await new Promise((resolve) => setImmediate(resolve));
    const next = cached.current();
    manual.calls[2]?.resolve(9);
    expect(await next).toBe(9);
    expect(manual.calls).toHaveLength(3);
  });

  it('answers null when the first read hangs, and the late value once it arrives', async () => {
    const manual = manualRead();
    const { cached, failures } = reader(manual.read, { timeoutMs: 20, cacheMs: 60_000 });
    expect(await cached.current()).toBeNull();
    expect(failures).toEqual(['timeout']);
    manual.calls[0]?.resolve(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cached.current()).toBe(3); // cached: no second read
    expect(manual.calls).toHaveLength(1);
  });

  it('reports a failed read and keeps the last value', async () => {
    const manual = manualRead();
    const { cached, failures } = reader(manual.read, { cacheMs: 0 });
    const first = cached.current();
    manual.calls[0]?.resolve(5);
    await first;
    const second = cached.current();
    await Promise.resolve();
    manual.calls[1]?.reject(new Error('connection refused'));
    expect(await second).toBe(5);
    expect(failures).toEqual(['error']);
  });
});
