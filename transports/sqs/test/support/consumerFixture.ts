import pino from 'pino';
import {
  attachSqsConsumer,
  type AttachConsumerOptions,
  type SqsConnection,
  type SqsConsumer,
} from '@ferry/sqs';
import type { InboxAcceptor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { PgTestAcceptor } from '../../../../test-support/pgAcceptor';
import { TestQueues, openConnection } from './sqs';

/** What an SQS consumer test works with; the fields are set in beforeAll. */
export interface SqsConsumerFixture {
  database: TestDatabase;
  connection: SqsConnection;
  queues: TestQueues;
  /** Consumers a test attached; closed after it. */
  readonly consumers: SqsConsumer[];
  /** A PgTestAcceptor on fresh tables. */
  freshAcceptor(): Promise<PgTestAcceptor>;
  /**
   * A consumer `orders` of `queueUrl` on the fixture's connection (1 s polls, a silent logger,
   * `options` over those), closed after the test.
   */
  attach(acceptor: InboxAcceptor, queueUrl: string, options?: Partial<AttachConsumerOptions>): SqsConsumer;
}

/**
 * Registers the hooks of an SQS consumer test file: a database, a connection and its queues per
 * file (the queues deleted at the end), and the consumers of each test closed after it.
 */
export function useSqsConsumerFixture(): SqsConsumerFixture {
  const fixture = {
    consumers: [] as SqsConsumer[],
    async freshAcceptor() {
      await fixture.database.db.execute('DROP TABLE IF EXISTS test_inbox');
      await fixture.database.db.execute('DROP TABLE IF EXISTS test_switch');
      return PgTestAcceptor.create(fixture.database.db);
    },
    attach(acceptor, queueUrl, options = {}) {
      const consumer = attachSqsConsumer(acceptor, {
        connection: fixture.connection,
        queueUrl,
        consumer: 'orders',
        waitTimeSeconds: 1,
        logger: pino({ level: 'silent' }),
        ...options,
      });
      fixture.consumers.push(consumer);
      return consumer;
    },
  } as SqsConsumerFixture;

  beforeAll(async () => {
    fixture.database = await createTestDatabase({ migrate: false });
    fixture.connection = openConnection();
    fixture.queues = new TestQueues(fixture.connection);
  });

  afterEach(async () => {
    await Promise.all(fixture.consumers.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await fixture.queues.cleanup();
    await fixture.connection.close();
    await fixture.database.drop();
  });

  return fixture;
}
