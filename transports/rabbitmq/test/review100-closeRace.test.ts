/**
 * Review 100: close() racing a connection that just opened. RabbitConnection.close() aborts a
 * connect attempt under way (review 97); here it runs at every moment around the attempt's end:
 * while the handshake runs, as the model is handed to its setups, while a consumer opens its
 * channel, declares, sets its prefetch and attaches. Whatever the moment: no socket, connection or
 * consumer is left (this process's sockets, and the broker's own view: its connections and each queue's consumers), no
 * rejection is unhandled, and no event but its `closed` follows the consumer's close(). On main
 * all of that held except the last: a close() that met an attach in progress ended the attempt,
 * which the attach loop took for a failure: `disconnected` (reason lost, a retry promised) and a
 * warning "attach failed; retrying" at every such shutdown. Real broker.
 */
import type { Logger } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { RabbitConnection, attachRabbitConsumer } from '@ferry/rabbitmq';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { openSocketsTo } from '../../../test-support/openSockets';
import { AMQP_URL, connectionsNamed, consumerCounts, uniqueName, waitFor } from './support/broker';

jest.setTimeout(180_000);
failOnUnhandledRejections();

const AMQP_PORT = Number(new URL(AMQP_URL).port || 5672);
const ITERATIONS = 40;

/** A logger keeping its warn and error lines. */
function recordingLogger(lines: string[]): Logger {
  const keep = (level: string) => (fields: object | string, message?: string) =>
    void lines.push(
      `${level} ${typeof fields === 'string' ? fields : `${message ?? ''} ${String((fields as { err?: unknown }).err)}`}`,
    );
  return { debug: () => undefined, info: () => undefined, warn: keep('warn'), error: keep('error') };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Run {
  readonly events: string[];
  readonly lines: string[];
  readonly afterClose: string[];
}

/**
 * One consumer on its own shared connection; `closeAt` is given the connection and resolves when
 * close() is to run. Closes the connection first (its owner's shutdown order may be either), then
 * the consumer, and watches what follows.
 */
async function race(
  prefix: string,
  queue: string,
  closeAt: (connection: RabbitConnection) => Promise<void>,
  order: 'connection first' | 'consumer first',
): Promise<Run> {
  const events: string[] = [];
  const lines: string[] = [];
  const logger = recordingLogger(lines);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: prefix, logger });
  let closing = false;
  const afterClose: string[] = [];
  const consumer = attachRabbitConsumer(
    { maxPayloadBytes: 1_000_000, acceptMany: () => Promise.reject(new Error('nothing is published')) },
    {
      connection,
      queue,
      consumer: 'review100',
      logger,
      observer: (event: TransportConsumerEvent) => {
        const name = event.type === 'disconnected' ? `disconnected:${event.reason}` : event.type;
        events.push(name);
        if (closing) afterClose.push(name);
      },
    },
  );
  void consumer.ready().catch(() => undefined);
  await closeAt(connection);
  const linesBefore = lines.length;
  closing = true;
  if (order === 'connection first') await Promise.all([connection.close(), consumer.close()]);
  else await Promise.all([consumer.close(), connection.close()]);
  // Whatever the close left running has its turn.
  for (let i = 0; i < 20; i += 1) await turn();
  await sleep(50);
  return {
    events,
    lines: lines.slice(linesBefore),
    afterClose,
  };
}

describe('review100: close() as the RabbitMQ connection just opened', () => {
  const before = { sockets: 0 };
  beforeAll(() => {
    before.sockets = openSocketsTo(AMQP_PORT);
  });

  it.each([
    ['connection first', 'turns after the model arrived'],
    ['consumer first', 'turns after the model arrived'],
    ['connection first', 'ms after the start'],
    ['consumer first', 'ms after the start'],
  ] as const)('%s, at %s: nothing is left, nothing follows', async (order, when) => {
    const prefix = uniqueName('review100-race');
    const queues: string[] = [];
    const problems: string[] = [];
    for (let i = 0; i < ITERATIONS; i += 1) {
      const queue = `${prefix}-${i}`;
      queues.push(queue);
      const closeAt =
        when === 'ms after the start'
          ? () => sleep(i / 2)
          : (connection: RabbitConnection) =>
              new Promise<void>((resolve) => {
                connection.onConnected(async () => {
                  for (let t = 0; t < i; t += 1) await turn();
                  resolve();
                });
              });
      const run = await race(prefix, queue, closeAt, order);
      const unexpected = run.afterClose.filter((name) => name !== 'disconnected:closed');
      if (unexpected.length > 0) problems.push(`#${i} events once closing: ${run.afterClose.join(',')}`);
      if (run.lines.length > 0) problems.push(`#${i} logged at close: ${run.lines.join(' | ')}`);
      const connectedAfterClosed =
        run.events.lastIndexOf('connected') > run.events.indexOf('disconnected:closed');
      if (run.events.includes('disconnected:closed') && connectedAfterClosed)
        problems.push(`#${i} connected after closed: ${run.events.join(',')}`);
    }
    await waitFor('this process to hold no socket to the broker', () =>
      openSocketsTo(AMQP_PORT) <= before.sockets ? true : undefined,
    );
    await waitFor('the broker to hold no connection of this test', async () =>
      (await connectionsNamed(prefix)) === 0 ? true : undefined,
    );
    // No consumer on any of the queues (each is named from the prefix): the broker's count of each.
    const withConsumers = (await consumerCounts(queues)).flatMap((count, i) => (count ? [queues[i]] : []));
    expect(withConsumers).toEqual([]);
    expect(problems).toEqual([]);
  });
});
