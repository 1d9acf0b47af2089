import { afterAll, afterEach, beforeAll } from '@jest/globals';
import type { SqsConnection, SqsConsumer } from '@ferry/sqs';
import { TestQueues, openConnection } from './sqs';

/** What an SQS test without a database works with; connection and queues are set in beforeAll. */
export interface SqsQueuesFixture {
  connection: SqsConnection;
  queues: TestQueues;
  /** Consumers a test attached; closed after it. */
  readonly consumers: SqsConsumer[];
  /** Connections a test opened; closed after it (after its consumers). */
  readonly opened: SqsConnection[];
}

/**
 * Registers the hooks of an SQS test file that needs queues but no database: a connection and its
 * queues per file (deleted at the end), and the consumers and connections of each test closed after it.
 */
export function useSqsQueuesFixture(): SqsQueuesFixture {
  const fixture = { consumers: [], opened: [] } as unknown as SqsQueuesFixture;
  beforeAll(() => {
    fixture.connection = openConnection();
    fixture.queues = new TestQueues(fixture.connection);
  });
  afterEach(async () => {
    await Promise.all(fixture.consumers.splice(0).map((c) => c.close()));
    await Promise.all(fixture.opened.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await fixture.queues.cleanup();
    await fixture.connection.close();
  });
  return fixture;
}
