/**
 * Review finding (failed first on main). emit() accepts an event header named `__proto__` (headersFault
 * walks Object.entries, so an own `__proto__` key, as JSON.parse or a computed key makes it, is an
 * ordinary name), stores it, and the relay's foreignRowFault passes the row. But eventHeaders /
 * outboxHeaders copy headers into a `{}` by assignment, and `headers['__proto__'] = 'v'` sets no
 * property (a string is not a prototype): every transport (RabbitMQ and Kafka via outboxHeaders,
 * SQS via eventHeaders) publishes the event without that header, silently. What emit stores and
 * the relay lets through should reach the broker, or be refused at emit naming the header.
 * Suggested fix: build the header objects with Object.create(null) / defineProperty (or a Map),
 * or refuse `__proto__` in headersFault.
 */
import { emit, type OutboxMessage } from '@ferry/core';
import { eventHeaders, outboxHeaders } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

test('a header emit() stores under the name __proto__ reaches the transports', async () => {
  const headers = JSON.parse('{"__proto__": "kept", "plain": "yes"}') as Record<string, string>;
  const { id } = await emit(t.prisma, { type: 'proto.header', payload: {}, headers });
  const [row] = await t.db.query<{ headers: string }>(
    'SELECT headers::text AS headers FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  const stored = JSON.parse(row!.headers) as Record<string, string>;
  expect(Object.keys(stored).sort()).toEqual(['__proto__', 'plain']);

  const message: OutboxMessage = {
    id,
    type: 'proto.header',
    payload: {},
    destination: null,
    orderingKey: null,
    tenantId: null,
    correlationId: null,
    causationId: null,
    headers: stored,
    traceparent: null,
    tracestate: null,
    attempt: 1,
    createdAt: new Date(),
  };
  // On main both lack __proto__: the header is dropped on the way to every broker.
  expect(Object.keys(eventHeaders(message)).sort()).toEqual(['__proto__', 'plain']);
  expect(Object.keys(outboxHeaders(message))).toContain('__proto__');
});
