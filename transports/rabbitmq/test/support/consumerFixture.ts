import type { InboxAcceptor } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
  type RabbitConsumerOptions,
  type RabbitPublisherOptions,
} from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { PgTestAcceptor } from '../../../../test-support/pgAcceptor';
import {
  AMQP_URL,
  backOnClose,
  openTestBroker,
  unackedCount,
  uniqueName,
  waitFor,
  type TestBroker,
} from './broker';

/** What a consumer test works with; the fields are replaced before each test. */
export interface ConsumerFixture {
  database: TestDatabase;
  broker: TestBroker;
  acceptor: PgTestAcceptor;
  /** The work queue, unique to the test. */
  queue: string;
  /** The connection_name of `connection`, for broker-side closes. */
  connectionName: string;
  connection: RabbitConnection;
  publisher: RabbitPublisher;
  /** The consumer `attach` made in this test, if any; closed after it. */
  consumer: RabbitConsumer | null;
  /** Attaches a consumer on the work queue (`inbox` default: the PgTestAcceptor) and waits until ready. */
  attach(options?: Partial<RabbitConsumerOptions> & { inbox?: InboxAcceptor }): Promise<RabbitConsumer>;
  /** Waits until the acceptor stored `expected.length` ids, then expects exactly those, each once. */
  expectStoredOnce(expected: readonly string[]): Promise<void>;
  /**
   * Waits until `count` deliveries are stored or dead-lettered (`<queue>.dlq`) and none of the
   * work queue is unacked; resolves with the dead letters.
   */
  settled(count: number, timeoutMs: number): Promise<GetMessage[]>;
  /** Closes the consumer `attach` made; resolves with what came back to the work queue (broker.ts backOnClose). */
  backOnClose(): Promise<number>;
  /**
   * Sends an unparseable delivery (`poison`) and a valid one (`neighbour`) to the work queue; waits
   * until both settled, then expects the poison dead-lettered and the neighbour stored once.
   */
  poisonAndNeighbour(poison: string, neighbour: string): Promise<void>;
}

/**
 * Registers the file-wide hooks of a RabbitMQ consumer test: `fixture.database` (no migrations)
 * and `fixture.broker` (a raw channel) before the file's tests, both closed after them.
 */
export function useDatabaseAndBroker<T extends { database: TestDatabase; broker: TestBroker }>(
  fixture: T,
): T {
  beforeAll(async () => {
    fixture.database = await createTestDatabase({ migrate: false });
    fixture.broker = await openTestBroker();
  });
  afterAll(async () => {
    await fixture.broker.close();
    await fixture.database.drop();
  });
  return fixture;
}

/**
 * Registers the hooks of a RabbitMQ consumer test file: a database and a raw broker channel
 * per file; per test a fresh PgTestAcceptor, work queue, connection and publisher, and
 * afterwards the consumer, publisher and connection closed and the queue's topology deleted.
 */
export function useConsumerFixture(
  defaults: () => Partial<RabbitConsumerOptions> = () => ({}),
  publisherOptions: () => Omit<RabbitPublisherOptions, 'connection'> = () => ({}),
): ConsumerFixture {
  const fixture = useDatabaseAndBroker({ consumer: null } as ConsumerFixture);

  beforeEach(async () => {
    await fixture.database.db.execute('DROP TABLE IF EXISTS test_inbox');
    fixture.acceptor = await PgTestAcceptor.create(fixture.database.db);
    await fixture.acceptor.refuse(false);
    fixture.queue = uniqueName('work');
    fixture.connectionName = uniqueName('consumer');
    fixture.connection = new RabbitConnection({
      url: AMQP_URL,
      connectionName: fixture.connectionName,
      reconnectBackoff: { initialMs: 50, maxMs: 500 },
    });
    fixture.publisher = new RabbitPublisher(fixture.connection, publisherOptions());
    fixture.consumer = null;
  });

  afterEach(async () => {
    fixture.acceptor.release();
    await fixture.consumer?.close();
    await fixture.publisher.close();
    await fixture.connection.close();
    await deleteWorkQueue(fixture.broker.channel, {
      queue: fixture.queue,
      retryTiersMs: fixture.consumer?.names.retryTiersMs ?? [100, 200],
    });
  });

  fixture.attach = async (options = {}) => {
    const { inbox = fixture.acceptor, ...rest } = options;
    const consumer = attachRabbitConsumer(inbox, {
      connection: fixture.connection,
      queue: fixture.queue,
      consumer: 'billing',
      retryBackoff: { initialMs: 100, maxMs: 200 },
      ...defaults(),
      ...rest,
    });
    fixture.consumer = consumer;
    await consumer.ready();
    return consumer;
  };
  fixture.expectStoredOnce = async (expected) => {
    await waitFor(`${expected.length} stored`, async () =>
      (await fixture.acceptor.storedIds()).length >= expected.length ? true : undefined,
    );
    const stored = await fixture.acceptor.storedIds();
    expect({
      missing: expected.filter((id) => !stored.includes(id)),
      extra: stored.filter((id, i) => !expected.includes(id) || stored.indexOf(id) !== i),
    }).toEqual({ missing: [], extra: [] });
  };
  fixture.settled = async (count, timeoutMs) => {
    const dead: GetMessage[] = [];
    await waitFor(
      `${count} settled (stored or dead-lettered), none unacked`,
      async () => {
        dead.push(...(await fixture.broker.drain(`${fixture.queue}.dlq`)));
        const stored = (await fixture.acceptor.storedIds()).length;
        // Distinct messages: a dead-letter copy sent again (its delivery came back after a
        // connection lost before the ack, as a loaded machine's missed heartbeats can cause)
        // counted twice, and settled() returned before the last message was settled.
        const distinct = new Set(dead.map((m, i) => m.properties.messageId ?? `#${i}`)).size;
        return distinct + stored >= count && (await unackedCount(fixture.queue)) === 0 ? true : undefined;
      },
      timeoutMs,
    );
    return dead;
  };
  fixture.backOnClose = () => backOnClose(fixture.consumer!, fixture.broker, fixture.queue);
  fixture.poisonAndNeighbour = async (poison, neighbour) => {
    const { channel } = fixture.broker;
    channel.sendToQueue(fixture.queue, Buffer.from('not json'), {
      contentType: 'application/json',
      messageId: poison,
    });
    channel.sendToQueue(fixture.queue, Buffer.from('{"n":1}'), { messageId: neighbour });
    const dead = await fixture.settled(2, 20_000);
    expect(dead.map((message) => message.properties.messageId)).toEqual([poison]);
    await fixture.expectStoredOnce([neighbour]);
  };
  return fixture;
}
