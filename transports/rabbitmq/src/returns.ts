import type { Channel, Message } from 'amqplib';

/**
 * The `mandatory` publishes of one channel not confirmed yet, and what the broker returned of
 * them. RabbitMQ sends a publish's basic.return before its basic.ack (an unroutable publish is
 * still acked), on the same channel; a return carries no delivery tag, so it is matched by
 * exchange, routing key, messageId and body. Two such publishes in flight at once are the same
 * message to the same place, and a binding changed between them can route one and return the
 * other; which one came back cannot be told, so the return marks every unconfirmed publish
 * identical to it: a routed one is then published again (a duplicate, the same messageId), the
 * returned one is never reported confirmed. (Crediting the oldest lost the returned one when
 * the oldest was routed and still waiting for its confirm.)
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
      for (const entry of list) {
        if (entry.returned === null && sameMessage(entry, message)) entry.returned = returnReason(message);
      }
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

/**
 * A string as it comes back from the wire: amqplib encodes a lone surrogate as U+FFFD. A property
 * left out (undefined or null: amqplib does not send it) is not the empty string (it does).
 */
function wire(value: string | null | undefined): string | undefined {
  return value === undefined || value === null ? undefined : Buffer.from(value).toString();
}

function sameMessage(pending: PendingReturn, message: Message): boolean {
  return (
    message.fields.exchange === wire(pending.exchange) &&
    message.fields.routingKey === wire(pending.routingKey) &&
    wire(message.properties.messageId as string | null | undefined) === wire(pending.messageId) &&
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
