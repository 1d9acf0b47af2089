/**
 * What the inbox's process span records of a handler's failure: the same redaction as
 * last_error (the inbox's `redact` option, thrown strings, the error's name), and span.end
 * never throws over the handler's error (found by review2).
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { installTracing, type TestTracing } from '../../../../test-support/tracing';
import { makeInbox, message } from '../inbox/helpers';

describe('secrets in the process span of a failed handler', () => {
  let t: TestDatabase;
  let tracing: TestTracing;
  beforeAll(async () => {
    t = await createTestDatabase();
    tracing = installTracing();
  });
  afterAll(async () => {
    await tracing.shutdown();
    await t.drop();
  });
  beforeEach(() => tracing.exporter.reset());

  /** The process span's status message and exception events, and the stored last_error. */
  async function failWith(thrown: unknown, keys?: string[]): Promise<{ span: string; stored: string }> {
    await t.db.execute('DELETE FROM ferry_inbox_receipts');
    const inbox = makeInbox(t.prisma, {
      ...(keys ? { redact: { keys } } : {}),
      handlers: {
        orders: async () => {
          throw thrown;
        },
      },
    });
    const input = message();
    await inbox.accept(input);
    await inbox.runOnce();
    await inbox.close();
    const processed = tracing.spans().filter((s) => s.name === 'process orders');
    expect(processed.length).toBeGreaterThan(0);
    const [row] = await t.db.query<{ last_error: string }>(
      'SELECT last_error FROM ferry_inbox_receipts WHERE message_id = $1',
      [input.messageId],
    );
    return {
      span: JSON.stringify(processed.map((s) => [s.status, s.events])),
      stored: String(row?.last_error ?? 'NOT PROCESSED'),
    };
  }

  it('a thrown string is redacted in the span as in last_error', async () => {
    const { span, stored } = await failWith('upstream said password=hunter2');
    expect(stored).not.toMatch(/hunter2|NOT PROCESSED/);
    expect(span).not.toContain('hunter2');
  });

  it("the inbox's redact.keys apply to the span as to last_error", async () => {
    const { span, stored } = await failWith(new Error('lookup failed: pin=8F3K2Q'), ['pin']);
    expect(stored).not.toContain('8F3K2Q');
    expect(span).not.toContain('8F3K2Q');
  });

  it("an error's name is redacted in the span as in last_error", async () => {
    // describeError keeps a name only when it looks like an identifier; span.ts records
    // String(error.name) as exception.type and as the first line of the stack it rebuilds.
    const error = Object.assign(new Error('rejected'), { name: 'UpstreamError password=hunter2' });
    const { span, stored } = await failWith(error);
    expect(stored).not.toContain('hunter2');
    expect(span).not.toContain('hunter2');
  });

  // span.end() reads the thrown value unguarded (instanceof, message, String()); when that throws,
  // inSpan rethrows span.end's error in place of the handler's: the receipt is kept, but its
  // last_error describes the tracing failure, not what the handler threw (without tracing:
  // describeError's own text). startSpan never throws; end() should not either.
  it.each([
    [
      'an Error whose message getter throws',
      'Error: (its name or message could not be read)',
      () => {
        const error = new Error('x');
        Object.defineProperty(error, 'message', {
          get() {
            throw new TypeError('unreadable');
          },
        });
        return error;
      },
    ],
    [
      'a Proxy whose traps throw',
      'Error: (its name or message could not be read)',
      () =>
        new Proxy(new Error('x'), {
          get() {
            throw new Error('trap');
          },
          getPrototypeOf() {
            throw new Error('trap');
          },
        }),
    ],
    ['a null-prototype object', 'non-error thrown: object', () => Object.create(null) as unknown],
  ])(
    'with tracing on, a handler that throws %s: the receipt keeps what the handler threw',
    async (_name, described, make) => {
      await t.db.execute('DELETE FROM ferry_inbox_receipts');
      const inbox = makeInbox(t.prisma, {
        handlers: {
          orders: async () => {
            throw make();
          },
        },
      });
      const input = message();
      await inbox.accept(input);
      await inbox.runOnce().catch(() => undefined);
      await inbox.close();
      const [row] = await t.db.query<{ status: string; last_error: string | null }>(
        'SELECT status, last_error FROM ferry_inbox_receipts WHERE message_id = $1',
        [input.messageId],
      );
      expect(row).toEqual({ status: 'RETRYABLE', last_error: described });
    },
  );
});
