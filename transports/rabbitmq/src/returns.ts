import type { Channel, Message } from 'amqplib';

/**
 * The `mandatory` publishes of one channel not confirmed yet, and what the broker returned of
 * them. RabbitMQ sends a publish's basic.return before its basic.ack (an unroutable publish is
 * still acked), on the same channel, in publish order; a return carries no delivery tag, so it
 * is matched to the oldest unconfirmed publish with the same exchange, routing key, messageId
 * and body. Two such publishes in flight at once are the same message to the same place: only
 * a binding changed between them could route one and return the other, and then the return is
 * credited to the older one (the one redelivered is a copy of the one lost).
 */
export interface PendingReturn {
  readonly exchange: string;
  readonly routingKey: string;
  readonly messageId: string | undefined;
  readonly content: Buffer;
  /** Why the broker returned it; null while it has not. */
  returned: string | null;
}

const pendingOf = new WeakMap<Channel, PendingReturn[]>();

/** Registers a mandatory publish before it is sent; `done` forgets it once its confirm came. */
export function watchReturn(
  channel: Channel,
  publish: Omit<PendingReturn, 'returned'>,
): { readonly pending: PendingReturn; readonly done: () => void } {
  let pending = pendingOf.get(channel);
  if (pending === undefined) {
    const list: PendingReturn[] = [];
    pending = list;
    pendingOf.set(channel, list);
    channel.on('return', (message: Message) => {
      const match = list.find((p) => p.returned === null && sameMessage(p, message));
      if (match !== undefined) match.returned = returnReason(message);
    });
  }
  const entry: PendingReturn = { ...publish, returned: null };
  const list = pending;
  list.push(entry);
  return {
    pending: entry,
    done: () => {
      const at = list.indexOf(entry);
      if (at >= 0) list.splice(at, 1);
    },
  };
}

/** A string as it comes back from the wire: amqplib encodes a lone surrogate as U+FFFD. */
function wire(value: string | undefined): string {
  return Buffer.from(value ?? '').toString();
}

function sameMessage(pending: PendingReturn, message: Message): boolean {
  return (
    message.fields.exchange === wire(pending.exchange) &&
    message.fields.routingKey === wire(pending.routingKey) &&
    wire(message.properties.messageId as string | undefined) === wire(pending.messageId) &&
    message.content.equals(pending.content)
  );
}

/** The broker's reply, with where the publish went: returned messages carry replyCode/replyText. */
function returnReason(message: Message): string {
  const fields = message.fields as Message['fields'] & { replyCode?: number; replyText?: string };
  const reply = [fields.replyCode, fields.replyText ?? 'returned by broker'].filter((x) => x !== undefined);
  return (
    `unroutable: ${reply.join(' ')} (exchange ${JSON.stringify(fields.exchange)}, ` +
    `routing key ${JSON.stringify(fields.routingKey)})`
  );
}
