import type { Kafka } from 'kafkajs';
import type { Logger } from '@ferry/core';
import { createDriver } from './client';
import { KafkajsDriver } from './client/kafkajs';
import type { KafkaClientDriver } from './client/types';
import {
  resolveConnectionOptions,
  type ConnectionOptions,
  type ResolvedConnectionOptions,
} from './connectionOptions';

export {
  resolveConnectionOptions,
  type ConnectionOptions,
  type KafkaLogLevel,
  type ResolvedConnectionOptions,
} from './connectionOptions';

/**
 * The shared client configuration of one application: brokers, client id, logging, TLS / SASL,
 * and which client library runs it (`client`: kafkajs or @platformatic/kafka). It opens no
 * socket itself; publishers, consumers and the topology helpers each own the clients they
 * create from it and close them in their own `close()`.
 */
export class KafkaConnection {
  readonly options: ResolvedConnectionOptions;
  /** The client library behind ferry's small client interface. */
  readonly driver: KafkaClientDriver;
  private kafkajs: KafkajsDriver | null;

  constructor(options: ConnectionOptions) {
    this.options = resolveConnectionOptions(options);
    this.driver = createDriver(this.options);
    this.kafkajs = this.driver instanceof KafkajsDriver ? this.driver : null;
  }

  /**
   * A kafkajs client of this configuration, for tooling outside ferry's publisher and consumer
   * (also when `client` is `'platformatic'`; then it is created on first use).
   */
  get kafka(): Kafka {
    this.kafkajs ??= new KafkajsDriver(this.options);
    return this.kafkajs.kafka;
  }

  get logger(): Logger {
    return this.options.logger;
  }
}
