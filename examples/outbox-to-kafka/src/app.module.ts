import { Module, type DynamicModule } from '@nestjs/common';
import { OutboxModule } from '@ferry/nestjs';
import { EXAMPLE_CONFIG, type ExampleConfig } from './config';
import { KafkaModule, KafkaPublisherService } from './kafka.module';
import { OrdersService } from './orders.service';
import { PrismaModule, PrismaService } from './prisma.service';

@Module({})
export class AppModule {
  static forRoot(config: ExampleConfig): DynamicModule {
    const prisma = PrismaModule.forRoot(config.databaseUrl);
    return {
      module: AppModule,
      imports: [
        prisma,
        OutboxModule.forRoot({
          prisma: PrismaService,
          publisher: KafkaPublisherService,
          imports: [prisma, KafkaModule.forRoot(config)],
          relay: { listenUrl: config.databaseUrl }, // LISTEN/NOTIFY: relays right after each commit
          pollInterval: 500,
        }),
      ],
      providers: [{ provide: EXAMPLE_CONFIG, useValue: config }, OrdersService],
    };
  }
}
