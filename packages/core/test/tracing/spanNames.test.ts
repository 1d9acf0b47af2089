/**
 * Problem (noticed by an earlier session): span names were taken from per-message values: the
 * relay named a PRODUCER span `publish <the event's destination>` (`events/user.8812.updated`, a
 * queue URL per tenant) and acceptance `accept <the delivery's consumer>`. OpenTelemetry's
 * messaging conventions require low-cardinality span names; the full name belongs in the
 * `messaging.destination.name` attribute.
 *
 * Expected: a publish span is named after the publisher's destination name (the exchange, topic or
 * queue; `publish` alone for a publisher that names none), an accept or process span after its
 * consumer, each from at most 100 distinct names per process (later ones: the operation alone);
 * the attributes keep the full per-message values.
 */
import { SpanKind } from '@opentelemetry/api';
import { createRelay, emitMany, type OutboxMessage } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { makeInbox, message, quietLogger } from '../inbox/helpers';
import { useTracedDatabase } from './helpers';

jest.setTimeout(60_000);

const DISTINCT = 1_000;
const BOUND = 100;

describe('span names stay low-cardinality when messages carry per-message values', () => {
  const env = useTracedDatabase();
  afterEach(async () => {
    await env.db().db.execute('DELETE FROM outbox_events');
  });

  const names = (kind: SpanKind) =>
    new Set(
      env
        .tracing()
        .spans()
        .filter((span) => span.kind === kind)
        .map((span) => span.name),
    );

  it('1,000 per-message destinations make at most 100 publish span names; the attribute keeps each', async () => {
    const destinations = Array.from({ length: DISTINCT }, (_, i) => `tenant-${i}/user.${i}.updated`);
    await emitMany(
      env.db().db,
      destinations.map((destination) => ({ type: 'user.updated', destination, payload: {} })),
    );
    // A publisher that names the destination by the part before the slash (an exchange).
    const publisher = Object.assign(new InMemoryPublisher(), {
      destinationName: (m: OutboxMessage) => (m.destination ?? '').split('/')[0] ?? null,
    });
    const relay = createRelay({
      db: env.db().db,
      publisher,
      logger: quietLogger,
      options: { batchSize: DISTINCT },
    });
    await relay.runOnce();
    await relay.close();
    const spans = env
      .tracing()
      .spans()
      .filter((span) => span.kind === SpanKind.PRODUCER);
    expect(spans).toHaveLength(DISTINCT);
    const published = names(SpanKind.PRODUCER);
    expect(published.size).toBe(BOUND + 1);
    expect(published).toContain('publish tenant-0');
    expect(published).toContain('publish');
    for (const name of published) expect(name).not.toContain('user.');
    expect(new Set(spans.map((span) => span.attributes['messaging.destination.name']))).toEqual(
      new Set(destinations),
    );
  });

  it('a publisher without a destination name: the span is `publish`, the attribute the full destination', async () => {
    await emitMany(env.db().db, [{ type: 't', destination: 'events/user.8812.updated', payload: {} }]);
    const publisher = new InMemoryPublisher();
    Object.defineProperty(publisher, 'destinationName', { value: undefined });
    const relay = createRelay({ db: env.db().db, publisher, logger: quietLogger });
    await relay.runOnce();
    await relay.close();
    const span = env.tracing().only('publish');
    expect(span.attributes['messaging.destination.name']).toBe('events/user.8812.updated');
  });

  it('1,000 consumers named by deliveries make at most 100 accept span names', async () => {
    // An inbox without handlers accepts for any consumer name a delivery gives.
    const inbox = makeInbox(env.db().prisma);
    const consumers = Array.from({ length: DISTINCT }, (_, i) => `tenant-${i}-handler`);
    await inbox.acceptMany(consumers.map((consumer) => message({ consumer })));
    const accepted = names(SpanKind.CONSUMER);
    expect(accepted.size).toBe(BOUND + 1);
    expect(accepted).toContain('accept tenant-0-handler');
    expect(accepted).toContain('accept');
    const spans = env.tracing().spans();
    expect(new Set(spans.map((span) => span.attributes['messaging.consumer.group.name']))).toEqual(
      new Set(consumers),
    );
  });
});
