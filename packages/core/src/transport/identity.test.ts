import { extractIdentity } from './identity';

/**
 * An application's extractor may be `async` by mistake: its answer is a Promise, which costs the
 * message its identity. When that Promise rejects, nothing may leave it unhandled: under Node's
 * default (--unhandled-rejections=throw) one unhandled rejection ends the consumer's process.
 */
describe('extractIdentity', () => {
  it('answers no identity for an async extractor that rejects, leaving no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const extracted = extractIdentity(async (): Promise<string> => {
        throw new Error('lookup failed');
      }, {} as unknown as never);
      expect(extracted).toEqual({ ok: false, detail: expect.stringContaining('a Promise') });
      // Node reports unhandled rejections once the microtask queue drains: a macrotask later.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
