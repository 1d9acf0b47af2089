/**
 * Review 90 (failed first): a destination URL's password in the relay's PRODUCER span.
 *
 * What I did: OpenTelemetry's SDK (in-memory exporter); events emitted with a destination that is
 * a queue URL holding a user and password (an SQS-compatible endpoint behind basic auth, as
 * @ferry/sqs's urlCredentials tests use), published by the relay through a publisher that names
 * its destinations by that URL (Publisher.destinationName, as a third-party publisher may).
 * What happened: the span attribute `messaging.destination.name` (the event's own destination,
 * as it is) and the span's name (`publish <destinationName>`) held the password: every trace
 * backend the application exports to got it. @ferry/sqs leaves it out of its outcomes, events and
 * its own destinationName; the span took the event's field unstripped.
 * What should happen: no span attribute or name holds a URL's user and password (the URL without
 * them, stripUrlCredentials, as in ferry's log lines and transport events).
 */
import { SpanKind } from '@opentelemetry/api';
import type { OutboxMessage } from '@ferry/core';
import { createRelay, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { useTracedDatabase } from './tracing/helpers';
import { quietLogger } from './inbox/helpers';

const QUEUE = 'https://ferry:hunter2@sqs.internal/000000000000/orders';
const env = useTracedDatabase();

it('no publish span holds the password of a destination URL, in its attributes or its name', async () => {
  const { id } = await emit(env.db().db, { type: 'order.created', payload: {}, destination: QUEUE });
  const publisher = Object.assign(new InMemoryPublisher(), {
    destinationName: (message: OutboxMessage) => message.destination,
  });
  const relay = createRelay({ db: env.db().db, publisher, logger: quietLogger });
  await relay.runOnce();
  await relay.close();
  const span = env
    .tracing()
    .spans()
    .find((s) => s.kind === SpanKind.PRODUCER && s.attributes['messaging.message.id'] === id);
  expect(span).toBeDefined();
  expect(JSON.stringify({ name: span?.name, attributes: span?.attributes })).not.toContain('hunter2');
  expect(span?.attributes['messaging.destination.name']).toContain('sqs.internal/000000000000/orders');
});
