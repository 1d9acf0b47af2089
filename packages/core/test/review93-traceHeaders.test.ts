/**
 * Review 93 (failed first): the trace context of a delivery whose trace headers are not written
 * exactly `traceparent` / `tracestate`, or whose tracestate is longer than W3C's 512 characters.
 *
 * What I did: accepted messages (as a transport does, headers through putStorableHeader; and by
 * inbox.accept directly) whose trace header was named `Traceparent` (Go's http.Header writes it so)
 * or `TRACEPARENT`, and one whose tracestate held a member of 200 characters and more members,
 * 600 characters in all; ran the handler, which emitted an event.
 * What happened: RabbitMQ, Kafka and SQS keep a header's name as the producer wrote it, and the
 * transports' one home (putStorableHeader) dropped any case variant of a reserved name: the
 * accept and process spans started new traces and the handler's event carried no trace. The
 * over-long tracestate was dropped whole.
 * What should happen: header names are case-insensitive for the trace context (W3C), the exact
 * name winning; a tracestate over 512 characters is truncated as W3C Trace Context, "tracestate
 * Limits", says: members longer than 128 characters removed first, then members from the end,
 * until it fits. A case variant of `x-ferry-*` stays left out (no header stands in for ferry's).
 */
import { emit, FERRY_HEADERS } from '@ferry/core';
import { putStorableHeader } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { installTracing, parentSpanId, type TestTracing } from '../../../test-support/tracing';
import { makeInbox, message } from './inbox/helpers';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const UPSTREAM_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE}-${UPSTREAM_SPAN}-01`;

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

/** Accepts one message for `orders` with `headers`, runs the worker once: the emitted row's trace. */
async function handled(
  headers: Record<string, string>,
): Promise<{ traceparent: string | null; tracestate: string | null }> {
  let id = '';
  const inbox = makeInbox(t.prisma, {
    handlers: {
      orders: async (_payload, context) => {
        id = (await emit(context.tx, { type: 'shipment.requested', payload: {} })).id;
      },
    },
  });
  await inbox.accept(message({ headers }));
  expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
  await inbox.close();
  const [row] = await t.db.query<{ traceparent: string | null; tracestate: string | null }>(
    'SELECT traceparent, tracestate FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  return row!;
}

/** Headers as a transport passes a delivery's through putStorableHeader. */
function delivered(entries: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(entries)) putStorableHeader(headers, name, value);
  return headers;
}

describe('trace header names in any case', () => {
  it.each(['Traceparent', 'TRACEPARENT', 'TraceParent'])(
    '%s from a delivery continues the trace',
    async (name) => {
      const row = await handled(delivered({ [name]: TRACEPARENT, Tracestate: 'v=1' }));
      expect(parentSpanId(tracing.only('accept orders'))).toBe(UPSTREAM_SPAN);
      expect(parentSpanId(tracing.only('process orders'))).toBe(UPSTREAM_SPAN);
      expect(row.traceparent).toContain(TRACE);
      expect(row.tracestate).toBe('v=1');
    },
  );

  it('Traceparent given to inbox.accept directly continues the trace', async () => {
    const row = await handled({ Traceparent: TRACEPARENT });
    expect(parentSpanId(tracing.only('process orders'))).toBe(UPSTREAM_SPAN);
    expect(row.traceparent).toContain(TRACE);
  });

  it('the exact name wins over a case variant, in either order', () => {
    const other = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    expect(delivered({ Traceparent: other, traceparent: TRACEPARENT }).traceparent).toBe(TRACEPARENT);
    expect(delivered({ traceparent: TRACEPARENT, TRACEPARENT: other }).traceparent).toBe(TRACEPARENT);
  });

  it("a case variant of ferry's own headers is still left out", () => {
    expect(delivered({ 'X-Ferry-Tenant-Id': 'acme', [FERRY_HEADERS.messageId]: 'm-1' })).toEqual({
      [FERRY_HEADERS.messageId]: 'm-1',
    });
  });
});

describe('a tracestate over 512 characters', () => {
  const long = `big=${'x'.repeat(196)}`; // 200 characters
  const short = (n: number) => `k${n}=${'v'.repeat(45)}`; // 50 characters
  const members = [short(0), long, short(1), short(2), short(3), short(4), short(5), short(6), short(7)];
  const tracestate = members.join(','); // 9 members, 608 characters

  it('is truncated as W3C says: the long member first, then from the end', async () => {
    expect(tracestate.length).toBeGreaterThan(512);
    const row = await handled({ traceparent: TRACEPARENT, tracestate });
    // Without `long` (200), the eight short members (8 × 50 + 7) fit.
    expect(row.tracestate).toBe(members.filter((m) => m !== long).join(','));
  });

  it('drops members from the end when removing the long ones is not enough', async () => {
    const many = Array.from({ length: 12 }, (_, n) => short(n));
    const row = await handled({ traceparent: TRACEPARENT, tracestate: many.join(',') });
    // 12 × 50 + 11 = 611; ten members (509) fit.
    expect(row.tracestate).toBe(many.slice(0, 10).join(','));
  });
});
