/**
 * Review 126: close() of a consumer called as it joins its group (from inside its own `connected`
 * event, or as its ready() resolves: an application that closes on first connect, a shutdown
 * racing the connect). close() resolved, but kafkajs went on with the start it was in the middle
 * of (its stop() returns at once while its runner is not marked running yet): it started fetching
 * after close(), failed to connect and crashed some 7 s later. Once close() resolves nothing of
 * the consumer runs: no connection opens, the client logs nothing, no event is emitted and nothing
 * is left unhandled. Likewise for the `connected` of a session restarted after the cluster was
 * lost (kafkajs restarts its crashed consumer itself). Runs on both clients
 * (platformatic/review126-closeInConnected).
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, type KafkaInboxConsumer } from '../src';
import { kafkaClient } from './clients';
import { ConsumerHarness } from './consumerHarness';
import { ShapedLink } from './shapedLink';
import { fastGroup, testConnection, uniqueName, waitFor } from './support';
import { expectNothingAfterClose, recordingLogger } from './quiet';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

/** Several heartbeat intervals (fastGroup's 300 ms) and client retry delays after close(). */
const WATCHED_AFTER_CLOSE_MS = 4_000;
const CLOSE_TIMEOUT_MS = 10_000;

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

test.each(['connected event', 'ready() resolving'] as const)(
  'close() on %s: once it resolved, no connection, no log line, no event',
  async (trigger) => {
    const topic = await harness.topicPair('r126');
    const log = recordingLogger();
    const events: TransportConsumerEvent[] = [];
    let closing: Promise<void> | undefined;
    let consumer: KafkaInboxConsumer | undefined = undefined;
    consumer = attachKafkaConsumer(harness.acceptor, {
      connection: testConnection({ kafkaLogLevel: 'debug', logger: log.logger }),
      topic,
      groupId: uniqueName('r126-group'),
      consumer: 'review126',
      ...fastGroup,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      logger: log.logger,
      observer: (event) => {
        events.push(event);
        if (trigger === 'connected event' && event.type === 'connected') closing ??= consumer!.close();
      },
    });
    if (trigger === 'ready() resolving') void consumer.ready().then(() => (closing ??= consumer!.close()));
    await waitFor(
      () => closing !== undefined,
      () => `never joined: ${JSON.stringify(events)}`,
    );
    await expectNothingAfterClose(closing!, log, events, {
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      watchedMs: WATCHED_AFTER_CLOSE_MS,
    });
  },
);

test('close() on the connected event of a session restarted after the cluster was lost: nothing runs after it', async () => {
  const topic = await harness.topicPair('r126-restart');
  const link = await ShapedLink.start({});
  const log = recordingLogger();
  const events: TransportConsumerEvent[] = [];
  let closing: Promise<void> | undefined;
  let consumer: KafkaInboxConsumer | undefined = undefined;
  // The events from the cut on: a session lost before it (a loaded machine's first join timing
  // out) must not close the consumer while ready() is still awaited.
  let cutAt = Number.POSITIVE_INFINITY;
  try {
    consumer = attachKafkaConsumer(harness.acceptor, {
      connection: link.connection('ferry-r126', {
        client: kafkaClient(),
        requestTimeoutMs: 2_000,
        logger: log.logger,
        kafkaLogLevel: 'debug',
      }),
      topic,
      groupId: uniqueName('r126-group'),
      consumer: 'review126',
      ...fastGroup,
      maxWaitTimeMs: 200,
      reconnectBackoff: { initialMs: 100, maxMs: 500 },
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      observer: (event) => {
        events.push(event);
        const lost = events.slice(cutAt).some((earlier) => earlier.type === 'disconnected');
        if (lost && event.type === 'connected') closing ??= consumer!.close();
      },
    });
    await consumer.ready({ timeoutMs: 40_000 });
    cutAt = events.length;
    link.setDown(true);
    await waitFor(
      () => events.slice(cutAt).some((event) => event.type === 'disconnected'),
      () => `the session was not lost: ${JSON.stringify(events)}`,
    );
    link.setDown(false);
    await waitFor(
      () => closing !== undefined,
      () => `never joined again: ${JSON.stringify(events)}`,
    );
    await expectNothingAfterClose(closing!, log, events, {
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      watchedMs: WATCHED_AFTER_CLOSE_MS,
    });
  } finally {
    await consumer?.close();
    await link.close();
  }
});
