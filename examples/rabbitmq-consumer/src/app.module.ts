import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InboxModule, InboxService } from '@ferry/nestjs';
import { attachRabbitConsumer, RabbitConnection, type RabbitConsumer } from '@ferry/rabbitmq';
import { EXAMPLE_CONFIG, type ExampleConfig } from './config';
import { ORDERS_CONSUMER, OrderHandlers } from './orders';
import { PrismaModule, PrismaService } from './prisma.service';

/** What the app observed, for the run's report. */
export class Metrics {
  duplicates = 0;
}

/**
 * Attaches the inbox to the RabbitMQ queue once the inbox is up; detaches first on shutdown. The
 * attach returns at once (the consumer keeps trying while RabbitMQ is unreachable): the caller
 * awaits `ready()` once the application context exists, so a broker that refuses or never answers
 * fails the start with `app.close()` still possible. A bootstrap hook that throws would leave the
 * inbox worker running, with no app to close it (see @ferry/nestjs, "Shutdown order").
 */
@Injectable()
export class RabbitInbound implements OnApplicationBootstrap, OnModuleDestroy {
  private connection: RabbitConnection | undefined;
  private consumer: RabbitConsumer | undefined;

  constructor(
    @Inject(EXAMPLE_CONFIG) private readonly config: ExampleConfig,
    private readonly inbox: InboxService,
  ) {}

  onApplicationBootstrap(): void {
    this.connection = new RabbitConnection({ url: this.config.amqpUrl, connectionName: 'rabbitmq-consumer' });
    this.consumer = attachRabbitConsumer(this.inbox, {
      connection: this.connection,
      queue: this.config.queue,
      consumer: ORDERS_CONSUMER,
      prefetch: 50,
    });
  }

  /** Resolves once consuming; FERRY_TIMEOUT after `timeoutMs`, FERRY_PERMANENT_FAILURE when refused. */
  async ready(timeoutMs = 30_000): Promise<void> {
    if (!this.consumer) throw new Error('RabbitInbound.ready() before the application bootstrapped');
    await this.consumer.ready({ timeoutMs });
  }

  /** AppModule is destroyed before InboxModule, so no delivery arrives at a draining inbox. */
  async onModuleDestroy(): Promise<void> {
    await this.consumer?.close();
    await this.connection?.close();
  }
}

@Module({})
export class AppModule {
  static forRoot(config: ExampleConfig, metrics = new Metrics()): DynamicModule {
    const prisma = PrismaModule.forRoot(config.databaseUrl);
    return {
      module: AppModule,
      imports: [
        InboxModule.forRoot({
          prisma: PrismaService,
          imports: [prisma],
          worker: { enabled: true, pollIntervalMs: 100 },
          observer: (event) => {
            if (event.type === 'duplicate') metrics.duplicates += 1;
          },
        }),
      ],
      providers: [{ provide: EXAMPLE_CONFIG, useValue: config }, OrderHandlers, RabbitInbound],
    };
  }
}
