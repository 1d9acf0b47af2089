/**
 * Review 131: close() while a request of the attach goes unanswered (a proxy silent from its
 * channel open, or from its first request naming the queue: the topology declare), on a shared
 * connection and on one the consumer owns; and the connection dropped as the attach closes its
 * channel, while close() waits for it. close() ends by the broker answers it waits for (each
 * capped), not by its closeTimeoutMs: set far beyond the wait here, it is never reached (no
 * warning); nothing is logged or emitted after it, nothing is unhandled. On main the owned
 * connection, its close unanswered and its socket destroyed, logged 'connection error' after
 * close() resolved. Real broker behind the proxy, real PostgreSQL.
 */
import { attachRabbitConsumer, RabbitConnection } from '@ferry/rabbitmq';
import { outcomeWithin } from '../../../test-support/deadlines';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { writtenLog } from '../../../test-support/writtenLog';
import { AMQP_URL, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

failOnUnhandledRejections();
jest.setTimeout(90_000);

/** Long enough for what close() left running to show. */
const WATCHED_AFTER_CLOSE_MS = 1_000;

const f = useConsumerFixture();

/** The start of the client's channel.open and channel.close method frames' payload (class 20). */
const CHANNEL_OPEN = '\u0000\u0014\u0000\u000a';
const CHANNEL_CLOSE = '\u0000\u0014\u0000\u0028';

type Methods = Record<string, (...args: unknown[]) => unknown>;

const CASES = [
  ['a shared', 'channel open', 'silent'],
  ['its own', 'channel open', 'silent'],
  ['a shared', 'declare', 'silent'],
  ['its own', 'declare', 'silent'],
  ['a shared', 'declare', 'dropped at its channel close'],
  ['its own', 'declare', 'dropped at its channel close'],
] as const;

test.each(CASES)(
  'close() on %s connection with the attach %s unanswered, the connection then %s: resolves without its closeTimeoutMs',
  async (kind, unanswered, then) => {
    const proxy = await halfOpenProxy(new URL(AMQP_URL));
    const url = proxy.url(AMQP_URL);
    const shared = kind === 'a shared' ? new RabbitConnection({ url, heartbeatSeconds: 60 }) : null;
    const log = writtenLog();
    const events: string[] = [];
    // The request is out once amqplib was asked for it on a connection or channel of the consumer.
    await f.connection.connect();
    const ownModel = f.connection.current;
    const holder = (
      unanswered === 'declare' ? Object.getPrototypeOf(f.broker.channel) : Object.getPrototypeOf(ownModel)
    ) as Methods;
    const method = unanswered === 'declare' ? 'assertExchange' : 'createConfirmChannel';
    const original = holder[method]!;
    let sent = false;
    const spy = jest.spyOn(holder, method).mockImplementation(function (this: unknown, ...args) {
      if (this !== f.broker.channel && this !== ownModel) sent = true;
      return original.apply(this, args);
    });
    try {
      proxy.silenceOn(unanswered === 'declare' ? f.queue : CHANNEL_OPEN);
      if (then !== 'silent') proxy.dropOn(CHANNEL_CLOSE);
      const consumer = attachRabbitConsumer(f.acceptor, {
        connection: shared ?? { url, heartbeatSeconds: 60 },
        queue: f.queue,
        consumer: 'billing',
        closeTimeoutMs: 600_000,
        logger: log.logger,
        observer: (event) => void events.push(event.type),
      });
      await waitFor(`the ${unanswered} sent`, () => (sent ? true : undefined));
      expect(await outcomeWithin(consumer.close(), 30_000)).toEqual({ value: undefined });
      expect(log.text()).not.toContain('closeTimeoutMs');
      const logged = log.text().length;
      const emitted = events.length;
      await new Promise((resolve) => setTimeout(resolve, WATCHED_AFTER_CLOSE_MS));
      expect({ log: log.text().slice(logged), events: events.slice(emitted) }).toEqual({
        log: '',
        events: [],
      });
      expect(events).not.toContain('connected');
    } finally {
      spy.mockRestore();
      shared?.destroy();
      proxy.close();
    }
  },
);
