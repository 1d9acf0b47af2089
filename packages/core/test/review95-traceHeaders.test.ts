/**
 * Review finding (failed first), review 95. A delivery's trace headers are read by any case of
 * their names, the exact lower-case name winning (review 93) whatever its value: an exact
 * `traceparent` that is empty or malformed won over a valid `Traceparent` (a proxy that adds an
 * empty `traceparent`, a producer writing both), in putStorableHeader and in incomingTrace.
 * What the user sees: the accept and process spans start new traces and the handler's events
 * carry none, though the delivery carried a valid trace context.
 * What should happen: a valid value wins over an invalid one, then the exact name, then the first
 * read (w3c.ts replacesTraceValue), in either order and in both readers.
 */
import { putStorableHeader } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { installTracing, parentSpanId, type TestTracing } from '../../../test-support/tracing';
import { makeInbox, message } from './inbox/helpers';

const UPSTREAM_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-4bf92f3577b34da6a3ce929d0e0e4736-${UPSTREAM_SPAN}-01`;

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

/** Accepts one message with `headers` and runs it: the process span's parent span id. */
async function processParent(headers: Record<string, string>): Promise<string | undefined> {
  const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
  await inbox.accept(message({ headers }));
  expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
  await inbox.close();
  return parentSpanId(tracing.only('process orders'));
}

function delivered(entries: readonly (readonly [string, string])[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) putStorableHeader(headers, name, value);
  return headers;
}

describe('review95: an invalid exact traceparent beside a valid one in another case', () => {
  it.each(['', 'garbage', '00-00000000000000000000000000000000-0000000000000000-01'])(
    'the valid Traceparent wins over traceparent %j, in either order, when stored',
    (invalid) => {
      expect(
        delivered([
          ['traceparent', invalid],
          ['Traceparent', TRACEPARENT],
        ]).traceparent,
      ).toBe(TRACEPARENT);
      expect(
        delivered([
          ['Traceparent', TRACEPARENT],
          ['traceparent', invalid],
        ]).traceparent,
      ).toBe(TRACEPARENT);
    },
  );

  it('the valid Traceparent given to inbox.accept directly continues the trace', async () => {
    expect(await processParent({ traceparent: '', Traceparent: TRACEPARENT })).toBe(UPSTREAM_SPAN);
  });

  it('a valid exact traceparent still wins over a valid case variant', () => {
    const other = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    expect(
      delivered([
        ['TRACEPARENT', other],
        ['traceparent', TRACEPARENT],
      ]).traceparent,
    ).toBe(TRACEPARENT);
  });
});
