import { FERRY_HEADERS } from '@ferry/core';
import { InMemoryBroker, type Unacked } from '@ferry/testing';

/** The message id ferry reads from a delivery. */
export function idOf(item: Unacked): string {
  return item.delivery.headers[FERRY_HEADERS.messageId] ?? item.delivery.messageId ?? '';
}

/**
 * A consumer that never settles a delivery the inbox answered as a duplicate (review 25's
 * variant): the broker holds it unacked for ever (RabbitMQ redelivers it to every next consumer;
 * Kafka's offset never moves past it; SQS shows it again after each visibility timeout).
 */
export class DuplicatesUnacked extends InMemoryBroker {
  private readonly settled = new Set<string>();
  override ack(items: readonly Unacked[]): void {
    super.ack(
      items.filter((item) => {
        if (this.settled.has(idOf(item))) return false;
        this.settled.add(idOf(item));
        return true;
      }),
    );
  }
}
