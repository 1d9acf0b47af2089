/**
 * A publish RabbitMQ refuses by closing the channel (a channel exception: 403 ACCESS_REFUSED for
 * an internal exchange or a missing write or topic permission, 404 NOT_FOUND for a missing
 * exchange, 406 PRECONDITION_FAILED, …) fails every publish after it on that channel, and the
 * ones before it that were not confirmed yet. The only thing that names the refused destination
 * is the close's reply text, which the broker cuts to 252 bytes and "..." (inside a multibyte
 * character too: amqplib decodes the split bytes as U+FFFD), and exchange names hold any text,
 * quotes included. So the text only says which exchanges to suspect; which publish was refused is
 * found by publishing the suspects' messages alone (publisher.ts publishAlone).
 */

import type { ConfirmChannel } from 'amqplib';
import type { Logger } from '@ferry/core';
import { openConfirmChannel, type RabbitConnection } from './connection';
import { untilAborted } from './waits';

/** A channel the broker closed with a reply code, and the reply text it gave. */
export interface ChannelRefusal {
  readonly code: number;
  readonly text: string;
  /** amqplib's error message (code, name and the reply text). */
  readonly message: string;
}

const REPLY_TEXT = ' with message "';

/** The refusal of an amqplib channel 'error' event, or null when it carries no reply code. */
export function channelRefusal(error: unknown): ChannelRefusal | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'number') return null;
  const message = String((error as { message?: unknown }).message ?? '');
  // amqplib: `Channel closed by server: 403 (ACCESS-REFUSED) with message "<reply text>"`; the
  // part before the reply text is amqplib's own, so its first marker is the right one.
  const at = message.indexOf(REPLY_TEXT);
  const text = at >= 0 && message.endsWith('"') ? message.slice(at + REPLY_TEXT.length, -1) : message;
  return { code, text, message };
}

const EXCHANGE = "exchange '";
const AFTER_NAME = "' in vhost '";
/** RabbitMQ's mark of a reply text cut to 255 bytes. */
const CUT = '...';

/**
 * The exchanges among `exchanges` that `text` may name as `exchange '<name>' in vhost '…'` (how
 * RabbitMQ names one in every refusal of a publish). A text cut short matches every exchange its
 * cut name is a prefix of: several of them is an ambiguity the caller resolves by publishing each
 * apart. The default exchange ('') is named `amq.default`.
 */
export function namedExchanges(text: string, exchanges: Iterable<string>): Set<string> {
  const cut = text.endsWith(CUT);
  // A multibyte character the cut split is decoded as one or more U+FFFD: left out, the rest of
  // the name is still a prefix of the exchange's.
  const body = cut ? text.slice(0, -CUT.length).replace(/\uFFFD+$/u, '') : text;
  const named = new Set<string>();
  const candidates = [...new Set(exchanges)];
  for (let at = body.indexOf(EXCHANGE); at >= 0; at = body.indexOf(EXCHANGE, at + 1)) {
    const tail = body.slice(at + EXCHANGE.length);
    for (const exchange of candidates) {
      const quoted = `${exchange === '' ? 'amq.default' : exchange}${AFTER_NAME}`;
      if (tail.startsWith(quoted) || (cut && quoted.startsWith(tail))) named.add(exchange);
    }
  }
  return named;
}

/** Whether `text` names an exchange at all (as a refusal of a publish does, see namedExchanges). */
export function namesAnExchange(text: string): boolean {
  return text.includes(EXCHANGE);
}

/**
 * The exchanges whose messages are published alone (each exchange on a channel of its own, one
 * message at a time): ones a channel closed at, or may have. Bounded: the oldest is forgotten
 * first (destinations are the events' own, any number of them).
 */
export class SuspectExchanges {
  private readonly exchanges = new Set<string>();

  constructor(private readonly limit = 1_000) {}

  has(exchange: string): boolean {
    return this.exchanges.has(exchange);
  }

  suspect(exchange: string): void {
    this.exchanges.delete(exchange);
    this.exchanges.add(exchange);
    for (const oldest of this.exchanges) {
      if (this.exchanges.size <= this.limit) break;
      this.exchanges.delete(oldest);
    }
  }

  /** The exchange took every message of its lane, none refused: it shares channels again. */
  cleared(exchange: string): void {
    this.exchanges.delete(exchange);
  }
}

/** What isolate needs of a message to publish. */
interface Routed {
  readonly exchange: string;
  readonly message: { readonly orderingKey?: string | null };
}

/**
 * `items` split into the messages published together (`shared`) and lanes published alone: one
 * per suspect exchange, with every message of a key that has one there, in their order (a key's
 * messages are never on two channels at once, where the broker may reorder them).
 */
export function isolate<T extends Routed>(
  items: readonly T[],
  suspects: SuspectExchanges,
): { shared: T[]; lanes: T[][] } {
  const laneOfKey = new Map<string, string>();
  for (const item of items) {
    const key = item.message.orderingKey ?? null;
    if (key !== null && !laneOfKey.has(key) && suspects.has(item.exchange)) laneOfKey.set(key, item.exchange);
  }
  const shared: T[] = [];
  const lanes = new Map<string, T[]>();
  for (const item of items) {
    const key = item.message.orderingKey ?? null;
    const lane =
      (key === null ? undefined : laneOfKey.get(key)) ??
      (suspects.has(item.exchange) ? item.exchange : undefined);
    if (lane === undefined) shared.push(item);
    else {
      const alone = lanes.get(lane);
      if (alone) alone.push(item);
      else lanes.set(lane, [item]);
    }
  }
  return { shared, lanes: [...lanes.values()] };
}

/**
 * A confirm channel of a lane, not the publisher's: waited for until `deadline` (then
 * `reason()`), and closed when it opens after that. Its errors (the broker's refusal closing it)
 * are logged at debug: the publish reads them itself.
 */
export async function openLane(
  connection: RabbitConnection,
  deadline: AbortSignal,
  logger: Logger,
  reason: () => Error,
): Promise<ConfirmChannel> {
  let gaveUp = false;
  const opening = connection.waitForConnection(deadline).then(openConfirmChannel);
  void opening.then(
    (channel) => {
      channel.on('error', (error: unknown) => {
        logger.debug({ err: error }, 'ferry.rabbitmq: publisher lane channel error');
      });
      if (gaveUp) void channel.close().catch(() => undefined);
    },
    () => undefined,
  );
  try {
    return await untilAborted(opening, deadline, reason);
  } catch (error) {
    gaveUp = true;
    throw error;
  }
}
