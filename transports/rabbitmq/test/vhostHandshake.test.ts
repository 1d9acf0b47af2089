/**
 * A broker that closes the connection when it is asked to open the virtual host (RabbitMQ does so
 * for a virtual host that does not exist, one that is down while the broker restarts, or one at its
 * connection limit). amqplib drops the broker's reply there ("Expected ConnectionOpenOk; got
 * <ConnectionClose channel:0>"), so ferry cannot tell these apart: the consumer keeps trying (a
 * virtual host that is down comes back), ready() names the virtual host and the likely causes in its
 * FERRY_TIMEOUT, and the consumer attaches once the virtual host exists. A consumer that owns its
 * connection (a URL) logs the connect failures with its own logger.
 */
import { FerryError } from '@ferry/core';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import { waitUntil } from '@ferry/testing';
import { writtenLog } from '../../../test-support/writtenLog';
import { AMQP_URL, addVhost, deleteVhost, uniqueName } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

const fixture = useConsumerFixture();

function vhostUrl(vhost: string): string {
  const url = new URL(AMQP_URL);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  return url.toString();
}

/** Connects `publisher` (its own connection, never reaching the broker's vhost) until it logged a failure. */
async function connectFailureLogged(
  publisher: RabbitPublisher,
  log: ReturnType<typeof writtenLog>,
): Promise<void> {
  try {
    void publisher.connect().catch(() => undefined);
    await waitUntil('the connect failure logged', () => log.text().includes('connect failed') || undefined, {
      timeoutMs: 10_000,
    });
  } finally {
    await publisher.close();
  }
}

async function readyError(consumer: RabbitConsumer, timeoutMs: number): Promise<unknown> {
  return consumer.ready({ timeoutMs }).then(
    () => new Error('ready() resolved'),
    (rejection: unknown) => rejection,
  );
}

describe('attachRabbitConsumer to a virtual host the broker does not open', () => {
  const vhost = uniqueName('ferry-vhost');

  afterAll(async () => {
    await deleteVhost(vhost);
  });

  test('keeps trying, says which virtual host and why in ready(), logs with its own logger, and attaches once the virtual host exists', async () => {
    const log = writtenLog();
    fixture.consumer = attachRabbitConsumer(fixture.acceptor, {
      connection: vhostUrl(vhost),
      queue: fixture.queue,
      consumer: 'billing',
      logger: log.logger,
    });

    const error = await readyError(fixture.consumer, 1_500);
    expect(error).toBeInstanceOf(FerryError);
    expect([(error as FerryError).code, (error as FerryError).retriable]).toEqual(['FERRY_TIMEOUT', true]);
    expect((error as FerryError).message).toContain(`virtual host '${vhost}'`);
    expect((error as FerryError).message).toMatch(/does not exist|is down/);
    // The connection the consumer made from its URL logs where the consumer does.
    expect(log.text()).toContain('connect failed');
    expect(log.text()).toContain(`virtual host '${vhost}'`);

    await addVhost(vhost);
    await expect(fixture.consumer.ready({ timeoutMs: 30_000 })).resolves.toBeUndefined();
  });

  test('a publisher that owns its connection logs its connect failures with its own logger', async () => {
    const log = writtenLog();
    const url = vhostUrl(uniqueName('ferry-vhost-missing'));
    await connectFailureLogged(new RabbitPublisher(url, { logger: log.logger }), log);
    expect(log.text()).toContain('virtual host');
  });

  test("a path that holds an '@' (a password's tail after an unencoded '/') is not shown, and a control character is escaped", async () => {
    // Meant: user "localhost", password "5672/s3cretTail": the URL parser reads host localhost,
    // port 5672 and the path '/s3cretTail@127.0.0.1/vh' (amqplib then logs in as guest).
    const url = new URL(AMQP_URL);
    const broken = `amqp://localhost:${url.port || 5672}/s3cretTail@${url.hostname}/vh`;
    const forged = vhostUrl(`${uniqueName('ferry-vhost')}\nlevel=error forged`);
    const messages: string[] = [];
    for (const target of [broken, forged]) {
      const connection = new RabbitConnection({ url: target, logger: writtenLog().logger });
      const failed = new Promise<void>((resolve) =>
        connection.onConnectRetry((error) => {
          messages.push((error as Error).message);
          resolve();
        }),
      );
      try {
        void connection.connect().catch(() => undefined);
        await failed;
      } finally {
        await connection.close();
      }
    }
    expect(messages[0]).toContain("the virtual host in the URL's path (not shown");
    expect(messages[0]).not.toContain('s3cretTail');
    expect(messages[1]).toContain('\\nlevel=error forged');
    expect(messages[1]).not.toContain('\n');
  });

  test('connection options read through getters (a config class) work with the component logger', async () => {
    class Settings {
      get url(): string {
        return vhostUrl(uniqueName('ferry-vhost-missing'));
      }
    }
    const log = writtenLog();
    const options = new Settings() as unknown as { url: string };
    await connectFailureLogged(new RabbitPublisher(options, { logger: log.logger }), log);
  });
});
