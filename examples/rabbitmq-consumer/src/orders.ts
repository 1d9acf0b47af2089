import { Injectable } from '@nestjs/common';
import { InboxPermanentError, type InboxHandlerContext } from '@ferry/core';
import { InboxHandler } from '@ferry/nestjs';
import type { Prisma } from '../generated/prisma/client';

export const ORDERS_CONSUMER = 'orders';

export interface OrderMessage {
  readonly orderId: string;
  /** Negative for a refund. */
  readonly amountCents: number;
}

/** The inbox handler: runs in the worker's transaction, once per accepted message. */
@Injectable()
export class OrderHandlers {
  @InboxHandler(ORDERS_CONSUMER)
  async record(
    payload: Readonly<Record<string, unknown>>,
    context: InboxHandlerContext<Prisma.TransactionClient>,
  ): Promise<void> {
    const order = payload as unknown as OrderMessage;
    const tenantId = context.tenantId ?? 'global';
    if (order.amountCents < 0) {
      const settings = await context.tx.tenantSettings.findUnique({ where: { tenantId } });
      // Retrying cannot help until an operator enables refunds: DEAD now, requeued later.
      if (!settings?.refundsEnabled) throw new InboxPermanentError(`refunds are disabled for ${tenantId}`);
    }
    await context.tx.order.create({
      data: { orderId: order.orderId, tenantId, amountCents: order.amountCents },
    });
  }
}
