import { Inject, Injectable, Module, type DynamicModule, type OnModuleDestroy } from '@nestjs/common';
import type { OutboxMessage, Publisher, PublishOutcome } from '@ferry/core';
import { KafkaConnection, KafkaPublisher } from '@ferry/kafka';
import { EXAMPLE_CONFIG, type ExampleConfig } from './config';

/**
 * The relay's Publisher as a Nest provider. ferry never closes a publisher: its owner does, here
 * in onModuleDestroy, which runs after the relay drained because OutboxModule imports this module.
 */
@Injectable()
export class KafkaPublisherService implements Publisher, OnModuleDestroy {
  private readonly publisher: KafkaPublisher;

  constructor(@Inject(EXAMPLE_CONFIG) config: ExampleConfig) {
    const connection = new KafkaConnection({
      brokers: [...config.kafkaBrokers],
      clientId: 'outbox-to-kafka',
    });
    this.publisher = new KafkaPublisher(connection);
  }

  readonly system = 'kafka';

  /** The topic: the relay names each publish span after it (`publish <topic>`). */
  destinationName(message: OutboxMessage): string | null {
    return this.publisher.destinationName(message);
  }

  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    return this.publisher.publish(messages, signal);
  }

  async onModuleDestroy(): Promise<void> {
    await this.publisher.close();
  }
}

@Module({})
export class KafkaModule {
  static forRoot(config: ExampleConfig): DynamicModule {
    return {
      module: KafkaModule,
      providers: [{ provide: EXAMPLE_CONFIG, useValue: config }, KafkaPublisherService],
      exports: [KafkaPublisherService],
    };
  }
}
