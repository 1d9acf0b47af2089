import { Kafka, logLevel, type LogEntry, type KafkaConfig, type logCreator } from 'kafkajs';
import type { Logger } from '@ferry/core';
import {
  resolveConnectionOptions,
  type ConnectionOptions,
  type KafkaLogLevel,
  type ResolvedConnectionOptions,
} from './options';

const KAFKAJS_LEVELS: Record<KafkaLogLevel, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

/** kafkajs log lines go to ferry's (pino) logger instead of the console. */
function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, ...fields } = log;
      const line = { ...fields, namespace };
      if (level === logLevel.ERROR) logger.error(line, message);
      else if (level === logLevel.WARN) logger.warn(line, message);
      else if (level === logLevel.INFO) logger.info(line, message);
      else logger.debug(line, message);
    };
}

/**
 * The shared client configuration of one application: brokers, client id, logging, TLS / SASL.
 * It opens no socket itself; publishers, consumers and the topology helpers each own the
 * kafkajs clients they create from it and close them in their own `close()`.
 */
export class KafkaConnection {
  readonly options: ResolvedConnectionOptions;
  readonly kafka: Kafka;

  constructor(options: ConnectionOptions) {
    this.options = resolveConnectionOptions(options);
    const config: KafkaConfig = {
      ...(this.options.kafkaConfig as Partial<KafkaConfig>),
      brokers: [...this.options.brokers],
      clientId: this.options.clientId,
      connectionTimeout: this.options.connectionTimeoutMs,
      requestTimeout: this.options.requestTimeoutMs,
      logLevel: KAFKAJS_LEVELS[this.options.kafkaLogLevel],
      logCreator: pinoLogCreator(this.options.logger),
    };
    this.kafka = new Kafka(config);
  }

  get logger(): Logger {
    return this.options.logger;
  }
}
