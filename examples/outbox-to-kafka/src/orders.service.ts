import { Inject, Injectable } from '@nestjs/common';
import { OutboxEmitter } from '@ferry/nestjs';
import { EXAMPLE_CONFIG, type ExampleConfig } from './config';
import { PrismaService } from './prisma.service';

export interface PlaceOrder {
  readonly id: string;
  readonly customerId: string;
  readonly amountCents: number;
}

@Injectable()
export class OrdersService {
  constructor(
    @Inject(EXAMPLE_CONFIG) private readonly config: ExampleConfig,
    private readonly prisma: PrismaService,
    private readonly outbox: OutboxEmitter,
  ) {}

  /** The order and its event commit together, or neither does. */
  async place(order: PlaceOrder): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await tx.order.create({ data: order });
      await this.outbox.emit(tx, {
        type: 'order.placed',
        payload: { ...order },
        destination: this.config.topic, // the Kafka topic
        orderingKey: order.customerId, // the Kafka key: one customer's events stay in order
        tenantId: this.config.tenant,
      });
    });
  }
}
