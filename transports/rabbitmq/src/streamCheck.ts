import type { Message } from 'amqplib';
import { abortableDelay } from '@ferry/core/transport';

/** The header RabbitMQ sets on every delivery of a stream queue: the message's offset. */
const STREAM_OFFSET_HEADER = 'x-stream-offset';

/**
 * The pauses before the consumer count is read again while it reads 0, each at most an eighth of
 * the attach's deadline. A stream counts 0 every time; a quorum queue counts 0 while its leader
 * does not answer within 250 ms (rabbit_quorum_queue:stat/2 answers 0 consumers on a timeout or
 * an error: a loaded broker, a leader on another node or moving).
 */
const RECOUNT_PAUSES_MS: readonly number[] = [250, 500, 1_000];

/** Whether `message` cannot come from a stream (which sets `x-stream-offset`, a number, on each). */
function fromNoStream(message: Message): boolean {
  return typeof message.properties.headers?.[STREAM_OFFSET_HEADER] !== 'number';
}

/**
 * Whether the queue just consumed is a stream (review 106, 107): it counts no consumer, the
 * caller's own included, at every read (`consumers`), and nothing delivered meanwhile
 * (`delivered`) proves otherwise. `signal` ends the pauses (the attach's deadline or close).
 */
export async function isStreamQueue(
  consumers: () => Promise<number>,
  delivered: () => readonly Message[],
  deadlineMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  for (let read = 0; ; read += 1) {
    if (delivered().some(fromNoStream) || (await consumers()) > 0 || delivered().some(fromNoStream))
      return false;
    const pause = RECOUNT_PAUSES_MS[read];
    if (pause === undefined) return true;
    await abortableDelay(Math.min(pause, deadlineMs / 8), signal).catch(() => undefined);
  }
}
