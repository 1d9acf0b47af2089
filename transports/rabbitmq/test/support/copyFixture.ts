import { FerryError, type InboxAcceptInput, type InboxAcceptResult, type InboxAcceptor } from '@ferry/core';
import { RabbitConnection, attachRabbitConsumer, deleteWorkQueue } from '@ferry/rabbitmq';
import type { RabbitConsumer, RabbitConsumerOptions } from '@ferry/rabbitmq';
import pino from 'pino';
import type { TestDatabase } from '../../../../test-support/database';
import type { PgTestAcceptor } from '../../../../test-support/pgAcceptor';
import { AMQP_URL, uniqueName, type TestBroker } from './broker';
import { useDatabaseAndBroker } from './consumerFixture';

/**
 * For the tests of the consumer's copies (retry tier, dead letter) against a topology the
 * operator declared (`declareTopology: false`): a database (no migrations) and a raw broker
 * channel per file, FailOnce, and attachUndeclared.
 */
export interface CopyFixture {
  database: TestDatabase;
  broker: TestBroker;
}

/** Registers the file's hooks (useDatabaseAndBroker). */
export function useCopyFixture(): CopyFixture {
  return useDatabaseAndBroker({} as CopyFixture);
}

/** Fails the first call with a retriable error that is not an outage (goes round the retry tiers). */
export class FailOnce implements InboxAcceptor {
  calls = 0;
  constructor(private readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.calls += 1;
    if (this.calls === 1) throw new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown');
    return this.inner.acceptMany(inputs);
  }
}

/** A consumer attachUndeclared made, and how to take it and both topologies down again. */
export interface UndeclaredConsumer {
  readonly connection: RabbitConnection;
  readonly consumer: RabbitConsumer;
  /**
   * Closes the consumer and its connection, deletes the operator's topology (`operatorTiersMs`)
   * and then the consumer's tiers, if they differ and exist.
   */
  close(): Promise<void>;
}

/**
 * Attaches consumer `billing` on `queue` with `declareTopology: false` (the operator declared it
 * with `operatorTiersMs`), a silent logger and its own connection named after `connectionPrefix`;
 * `options` win. Not yet ready: the caller waits.
 */
export function attachUndeclared(
  broker: TestBroker,
  acceptor: InboxAcceptor,
  setup: { queue: string; connectionPrefix: string; operatorTiersMs?: readonly number[] },
  options: Partial<RabbitConsumerOptions> = {},
): UndeclaredConsumer {
  const { queue, operatorTiersMs } = setup;
  const connection = new RabbitConnection({
    url: AMQP_URL,
    connectionName: uniqueName(setup.connectionPrefix),
  });
  const consumer = attachRabbitConsumer(acceptor, {
    connection,
    queue,
    consumer: 'billing',
    declareTopology: false,
    logger: pino({ level: 'silent' }),
    ...options,
  });
  return {
    connection,
    consumer,
    close: async () => {
      const tiers = consumer.names.retryTiersMs;
      await consumer.close();
      await connection.close();
      await deleteWorkQueue(broker.channel, { queue, retryTiersMs: operatorTiersMs });
      await deleteWorkQueue(broker.channel, { queue, retryTiersMs: tiers }).catch(() => undefined);
    },
  };
}
