import type { ConfirmChannel, Options } from 'amqplib';
import { describeError } from './errors';
import { watchReturn } from './returns';

type PublishOptions = Options.Publish;

/**
 * How one confirmed publish ended. Only `confirmed` means the broker took responsibility;
 * `returned`: a `mandatory` publish no queue took (the broker confirms it all the same), the
 * error naming the exchange and routing key; `failed`: nack, closed channel, abort, unencodable.
 */
export type ConfirmResult =
  | { readonly status: 'confirmed' }
  | {
      readonly status: 'returned' | 'failed';
      readonly error: string;
      /**
       * True when the broker had not answered when `signal` aborted (the confirm deadline, a
       * shutdown): it may still take the message, or may be unable to take any (a resource
       * alarm, a silent connection), which is no fault of the message's.
       */
      readonly unanswered?: boolean;
    };

/**
 * Publishes on a confirm channel and resolves once the broker acked or nacked it, the channel
 * closed, or `signal` aborted (confirm timeout, shutdown). Never rejects. A `mandatory` publish
 * the broker returned before acking it resolves `returned` (see watchReturn).
 *
 * When amqplib throws (it cannot encode the publish), it has already queued the confirm
 * callback, and every later confirm on the channel would be credited to the publish before it:
 * `onThrown` is then called synchronously with the error, and the caller must publish nothing
 * more on the channel and discard it.
 */
export function publishWithConfirm(
  channel: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  options: PublishOptions,
  signal: AbortSignal,
  onThrown?: (error: unknown) => void,
): Promise<ConfirmResult> {
  return new Promise((resolve) => {
    let settled = false;
    const watch = options.mandatory
      ? watchReturn(channel, { exchange, routingKey, messageId: options.messageId, content })
      : null;
    // The watch is kept until the broker answered (or the publish never left): a publish given up
    // on is still on the wire, and its return must not be taken for another's.
    const settle = (result: ConfirmResult) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const onAbort = () =>
      settle({ status: 'failed', error: `no confirm: ${describeError(signal.reason)}`, unanswered: true });
    if (signal.aborted) {
      watch?.done();
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      channel.publish(exchange, routingKey, content, options, (error: unknown) => {
        watch?.done();
        if (error) settle({ status: 'failed', error: `broker did not confirm: ${unconfirmedReason(error)}` });
        else if (watch?.pending.returned) settle({ status: 'returned', error: watch.pending.returned });
        else settle({ status: 'confirmed' });
      });
    } catch (error) {
      watch?.done();
      settle({ status: 'failed', error: `publish failed: ${describeError(error)}` });
      onThrown?.(error);
    }
  });
}

/**
 * Why the broker did not confirm a publish: amqplib's text, and for a nack what RabbitMQ nacks
 * for (the reason a FAILED event keeps; amqplib says only "message nacked").
 */
function unconfirmedReason(error: unknown): string {
  const text = describeError(error);
  return text === 'message nacked'
    ? `${text} (a queue it routes to refused it: full or over its byte limit with x-overflow reject-publish, or unavailable)`
    : text;
}
