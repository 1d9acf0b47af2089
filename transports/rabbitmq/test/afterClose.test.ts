/**
 * Once close() of a publisher or consumer resolved, nothing of it runs any more (watchAfterClose:
 * no timer of it fires, no socket of it opens, no log line, no event), also when close() came
 * while its connection was being re-established: the broker closed it (a connection being
 * re-established after a loss), or the broker is unreachable (a connect refused, the backoff
 * between attempts). The broker holds no connection of it afterwards.
 */
import { attachRabbitConsumer, RabbitConnection, RabbitPublisher, type ConnectionOptions } from '../src';
import type { InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent, TransportPublisherEvent } from '@ferry/core/transport';
import { closedPort } from '../../../test-support/closedPort';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { NOTHING_AFTER_CLOSE, watchAfterClose, type AfterClose } from '../../../test-support/afterClose';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import {
  AMQP_URL,
  closeConnectionsNamed,
  connectionsNamed,
  openTestBroker,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';

failOnUnhandledRejections();
jest.setTimeout(90_000);

const CLOSE_TIMEOUT_MS = 300;
/** Longer than any wait of the objects here: the watch ends earlier, once no timer of the object is pending. */
const WATCHED = { deadlineMs: 10_000, windowMs: 8_000 };
/** Attempts a few hundred ms apart: close() comes during the wait between two, or during one. */
const RECONNECT = { initialMs: 200, maxMs: 400, jitter: 'none' as const };

let broker: TestBroker;
const queues: string[] = [];
beforeAll(async () => {
  broker = await openTestBroker();
});
afterAll(async () => {
  for (const queue of queues) await broker.channel.deleteQueue(queue).catch(() => undefined);
  await broker.close();
});

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1_000_000,
  acceptMany: async (inputs: readonly unknown[]) =>
    inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
};

type Owner = 'publisher' | 'consumer';

/** A consumer of a new queue, on `connection`, made as the watched object. */
async function watchedConsumer(
  watch: AfterClose,
  connection: RabbitConnection | ConnectionOptions,
  accepting: InboxAcceptor,
) {
  const queue = uniqueName('after-close');
  queues.push(queue);
  await broker.channel.assertQueue(queue);
  const consumer = watch.own(() =>
    attachRabbitConsumer(accepting, {
      connection,
      queue,
      consumer: 'afterClose',
      declareTopology: false,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      logger: watch.logger,
      observer: watch.observer<TransportConsumerEvent>(),
    }),
  );
  return { consumer, queue };
}

/** A publisher or consumer owning its connection to `url`, made as the watched object, connecting. */
async function owner(kind: Owner, url: string, watch: AfterClose, connectionName: string) {
  const connection = { url, connectionName, reconnectBackoff: RECONNECT, logger: watch.logger };
  if (kind === 'publisher') {
    const publisher = watch.own(
      () =>
        new RabbitPublisher(connection, {
          logger: watch.logger,
          observer: watch.observer<TransportPublisherEvent>(),
        }),
    );
    void watch.own(() => publisher.connect()).catch(() => undefined);
    return publisher;
  }
  const { consumer } = await watchedConsumer(watch, connection, acceptor);
  void watch.own(() => consumer.ready()).catch(() => undefined);
  return consumer;
}

test.each<Owner>(['publisher', 'consumer'])(
  'a %s closed while its connection, closed by the broker, is re-established',
  async (kind) => {
    const watch = watchAfterClose();
    const name = uniqueName('after-close-conn');
    try {
      const closing = await owner(kind, AMQP_URL, watch, name);
      await waitFor('the connection to open', async () =>
        (await connectionsNamed(name)) === 1 ? true : undefined,
      );
      const losses = () => watch.lines.filter((line) => line.includes('reconnecting')).length;
      await closeConnectionsNamed(name);
      await waitFor('the loss to be seen', async () => (losses() > 0 ? true : undefined));
      expect(await watch.close(() => closing.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
      expect(await connectionsNamed(name)).toBe(0);
    } finally {
      watch.stop();
    }
  },
);

test.each<Owner>(['publisher', 'consumer'])(
  'a %s closed while it connects to an unreachable broker',
  async (kind) => {
    const watch = watchAfterClose();
    try {
      const url = `amqp://guest:guest@127.0.0.1:${await closedPort()}`;
      const closing = await owner(kind, url, watch, uniqueName('after-close-conn'));
      await waitFor('a second connect attempt', async () => (watch.connects() >= 2 ? true : undefined));
      expect(await watch.close(() => closing.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
    } finally {
      watch.stop();
    }
  },
);

test.each(['its own', 'a shared'] as const)(
  'a consumer on %s connection closed past closeTimeoutMs, its batch unaccepted and the broker gone silent',
  async (kind) => {
    const watch = watchAfterClose();
    const proxy = await halfOpenProxy(new URL(AMQP_URL));
    const options = { url: proxy.url(AMQP_URL), reconnectBackoff: RECONNECT, logger: watch.logger };
    // A shared one is the application's (made outside the watched consumer), closed by the test after.
    const shared = kind === 'a shared' ? new RabbitConnection(options) : null;
    await shared?.connect();
    let offered = 0;
    // An acceptance that never answers (a database holding a lock): close() gives up on it.
    const hanging: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: () => {
        offered += 1;
        return new Promise(() => undefined);
      },
    };
    try {
      const { consumer, queue } = await watchedConsumer(watch, shared ?? options, hanging);
      broker.channel.sendToQueue(queue, Buffer.from('{}'), {
        contentType: 'application/json',
        messageId: 'm1',
      });
      await waitFor('the batch to be offered', async () => (offered > 0 ? true : undefined));
      proxy.silence();
      expect(await watch.close(() => consumer.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
    } finally {
      watch.stop();
      await shared?.destroy();
      proxy.close();
    }
  },
);

// Review 150: an acceptance close() gave up on (past closeTimeoutMs) that answers after close()
// resolved (a database lock released later): nothing of the consumer runs of it (on main its
// delivery buffer scheduled a turn for a batch that no longer could come, an Immediate fired).
test('a consumer closed past closeTimeoutMs whose batch is accepted after close() resolved', async () => {
  const watch = watchAfterClose();
  let answer: (() => void) | undefined;
  const late: InboxAcceptor = {
    maxPayloadBytes: 1_000_000,
    acceptMany: (inputs: readonly unknown[]) =>
      new Promise((resolve) => {
        answer = () => resolve(inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })));
      }),
  };
  try {
    const { consumer, queue } = await watchedConsumer(watch, { url: AMQP_URL, logger: watch.logger }, late);
    await watch.own(() => consumer.ready());
    broker.channel.sendToQueue(queue, Buffer.from('{}'), {
      contentType: 'application/json',
      messageId: 'm1',
    });
    await waitFor('the batch to be offered', async () => (answer ? true : undefined));
    const closing = watch.own(() => consumer.close());
    // Answered as close() resolves, outside the consumer's own work.
    void closing.then(() => answer?.());
    expect(await watch.watch(closing, WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
  } finally {
    watch.stop();
  }
});
