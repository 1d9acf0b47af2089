/**
 * The in-memory consumer where it behaved otherwise than ferry's real consumers; each case names
 * what they do (transports/*: README and tests), which a test passing here must not contradict.
 */
import { FERRY_HEADERS, FerryError, type InboxAcceptor } from '@ferry/core';
import { oversizeBodyFault, type TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();

const WAIT = { timeoutMs: 5_000 };

function send(broker: InMemoryBroker, queue: string, id: string, body = '{}'): void {
  broker.send(queue, {
    body: Buffer.from(body),
    headers: { [FERRY_HEADERS.messageId]: id },
  });
}

/** The events of an observer, without the consumer's random instance id. */
function recorder() {
  const events: TransportConsumerEvent[] = [];
  return {
    events,
    observer: (event: TransportConsumerEvent) => void events.push(event),
    types: () => events.map((event) => event.type),
  };
}

// SQS's ready() rejects at once with FERRY_PERMANENT_FAILURE (transports/sqs/test/readiness.test.ts);
// RabbitMQ's with `declareTopology: false` and Kafka's time out naming it (404 NOT_FOUND, "Kafka
// topics missing"). None resolves; each reports every failed attempt as `disconnected` and keeps
// trying until the queue exists.
describe('the in-memory consumer of a queue that does not exist', () => {
  test('ready() rejects at once with FERRY_PERMANENT_FAILURE naming the queue (as SQS), not resolves; the consumer keeps trying and consumes once the queue is declared', async () => {
    const broker = new InMemoryBroker();
    const acceptor = new MemoryAcceptor();
    const seen = recorder();
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'orders',
      consumer: 'c',
      observer: seen.observer,
    });
    try {
      const refused = await consumer.ready({ timeoutMs: 2_000 }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(FerryError);
      expect(refused).toMatchObject({
        code: 'FERRY_PERMANENT_FAILURE',
        retriable: false,
        message: expect.stringContaining('orders'),
        details: { queue: 'orders' },
      });
      // Not consuming: no `connected`; each failed attempt is `disconnected` with its wait.
      expect(seen.types()).not.toContain('connected');
      expect(seen.events[0]).toMatchObject({
        type: 'disconnected',
        reason: 'lost',
        source: 'orders',
        error: expect.stringContaining('FERRY_PERMANENT_FAILURE'),
        retryInMs: expect.any(Number),
      });

      broker.declareQueue('orders');
      await consumer.ready({ timeoutMs: 5_000 });
      send(broker, 'orders', 'after-declare');
      await waitUntil('the delivery accepted', () => acceptor.accepted.length === 1, WAIT);
      expect(seen.types().filter((type) => type === 'connected')).toHaveLength(1);
    } finally {
      await consumer.close();
    }
  });
});

// RabbitMQ's broker cancels the consumer: `disconnected` ("channel closed"), then `connected` once
// it consumes the queue again (re-declared, or once it exists with `declareTopology: false`); SQS's
// poll fails (QueueDoesNotExist): `disconnected` with the wait before the next poll.
describe('the in-memory consumer whose queue is deleted', () => {
  test('reports disconnected (lost, naming the queue, with the wait before the next attempt), and connected once it consumes the queue declared again', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('orders');
    const acceptor = new MemoryAcceptor();
    const seen = recorder();
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'orders',
      consumer: 'c',
      observer: seen.observer,
    });
    try {
      await consumer.ready({ timeoutMs: 5_000 });
      expect(seen.types()).toEqual(['connected']);

      broker.deleteQueue('orders');
      const lost = await waitUntil(
        'a disconnected event',
        () => seen.events.find((event) => event.type === 'disconnected'),
        WAIT,
      );
      expect(lost).toMatchObject({
        reason: 'lost',
        source: 'orders',
        error: expect.stringContaining('orders'),
        retryInMs: expect.any(Number),
      });

      broker.declareQueue('orders');
      send(broker, 'orders', 'after-redeclare');
      await waitUntil('the delivery accepted', () => acceptor.accepted.length === 1, WAIT);
      const types = seen.types();
      expect(types.lastIndexOf('connected')).toBeGreaterThan(types.indexOf('disconnected'));
    } finally {
      await consumer.close();
    }
  });
});

// Every transport's consumer measures the acceptor's maxPayloadBytes on the parsed payload (the
// acceptor's own check) and refuses unparsed only a body over 6 × it without whitespace between
// tokens, with oversizeBodyFault's detail (transports/*/src: delivery.ts, wire.ts; review 84).
describe('the in-memory consumer and the payload limit', () => {
  test("dead-letters a body past 6 × the acceptor's maxPayloadBytes unparsed, with the transports' detail, and accepts an escaped body whose payload is within it", async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const acceptor = new MemoryAcceptor(16);
    const big = JSON.stringify({ text: 'x'.repeat(100) });
    // {"t":"xx"}: 10 bytes as a payload, 20 as this body.
    const escaped = '{"t":"\\u0078\\u0078"}';
    send(broker, 'q', 'too-big', big);
    send(broker, 'q', 'escaped', escaped);
    send(broker, 'q', 'small');
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
    });
    try {
      await waitUntil('the neighbours accepted', () => acceptor.accepted.length === 2, WAIT);
    } finally {
      await consumer.close();
    }
    expect(broker.deadLetters('q').map(({ reason, detail }) => ({ reason, detail }))).toEqual([
      { reason: 'payload_too_large', detail: oversizeBodyFault(big, 16) },
    ]);
    expect(Buffer.byteLength(escaped)).toBeGreaterThan(16);
    expect(acceptor.accepted).toEqual(['escaped', 'small']);
    expect(acceptor.offered).not.toContain('too-big');
  });
});

// RabbitMQ copies a delivery whose acceptance failed (a retriable error that is not an outage) to
// the retry tier of its own backoff, backoffDelay(its transport attempts + 1), acks it and goes on
// with the deliveries behind it; it comes back at the tail of the queue once the tier's TTL expired.
describe('the in-memory consumer after a failed acceptance', () => {
  test('delays each failed delivery by its own backoff and goes on with the deliveries behind it, as RabbitMQ, instead of pausing the queue', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const accepted: string[] = [];
    // A database error of unknown cause for the ids starting with `poison`: retriable, not an
    // outage, so a batch holding only such a delivery goes round the transport's retry.
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: async (inputs) => {
        if (inputs.some((input) => input.messageId.startsWith('poison'))) {
          throw new FerryError('FERRY_DATABASE_ERROR', 'refused by a trigger');
        }
        accepted.push(...inputs.map((input) => input.messageId));
        return inputs.map((input) => ({
          kind: 'accepted' as const,
          id: `row-${input.messageId}`,
        }));
      },
    };
    for (const id of ['poison-1', 'poison-2', 'good-1', 'good-2']) send(broker, 'q', id);
    const seen = recorder();
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      maxBatchSize: 1,
      // A delivery's first trip waits 30 s: far longer than this test waits for anything.
      retryBackoff: {
        initialMs: 30_000,
        multiplier: 2,
        maxMs: 60_000,
        jitter: 'none',
      },
      observer: seen.observer,
    });
    try {
      // The poisoned deliveries wait out their backoff; the good ones behind them go on at once.
      await waitUntil('the good deliveries accepted', () => accepted.length === 2, WAIT);
      expect(accepted).toEqual(['good-1', 'good-2']);
      // Each delay is the delivery's own first trip (RabbitMQ: backoffDelay(attempts + 1)), not
      // the consumer's count of failed batches in a row.
      const delays = seen.events.flatMap((event) =>
        event.type === 'acceptance-failed' ? [event.delayMs] : [],
      );
      expect(delays).toEqual([30_000, 30_000]);
      // The broker still holds both, waiting out their delay, as RabbitMQ's retry tier queues do.
      expect({
        held: broker.held('q'),
        dead: broker.deadLetters('q').length,
      }).toEqual({ held: 2, dead: 0 });
    } finally {
      await consumer.close();
    }
  });
  test('a failed delivery comes back after its delay at the tail of the queue, behind the deliveries that went on meanwhile', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const accepted: string[] = [];
    let failed = false;
    // The first offer of `flaky` fails with a retriable database error; every later one succeeds.
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: async (inputs) => {
        if (!failed && inputs.some((input) => input.messageId === 'flaky')) {
          failed = true;
          throw new FerryError('FERRY_DATABASE_ERROR', 'refused once');
        }
        accepted.push(...inputs.map((input) => input.messageId));
        return inputs.map((input) => ({ kind: 'accepted' as const, id: `row-${input.messageId}` }));
      },
    };
    for (const id of ['flaky', 'next-1', 'next-2']) send(broker, 'q', id);
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      maxBatchSize: 1,
      retryBackoff: { initialMs: 200, maxMs: 200, jitter: 'none' },
    });
    try {
      await waitUntil('all three accepted', () => accepted.length === 3, WAIT);
    } finally {
      await consumer.close();
    }
    expect(accepted).toEqual(['next-1', 'next-2', 'flaky']);
  });
});
