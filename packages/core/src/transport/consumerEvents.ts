import type { Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import type { TransportConsumerEvent, TransportObserver } from './events';

type WithoutOrigin<E> = E extends unknown ? Omit<E, 'transport' | 'source'> : never;

/** A consumer event as a transport writes it: the emitter adds `transport` and `source`. */
export type ConsumerEventBody = WithoutOrigin<TransportConsumerEvent>;

/** Emits one event; `source` overrides the consumer's own (a Kafka consumer reads several topics). */
export type ConsumerEmit = (event: ConsumerEventBody, source?: string) => void;

/**
 * The one way a consumer reports to its observer: every event gets the transport's name and
 * the queue / topic it came from, and goes through safeEmit (a throwing observer is logged
 * and changes nothing).
 */
export function consumerEmitter(
  transport: string,
  source: string,
  observer: TransportObserver<TransportConsumerEvent> | undefined,
  logger?: Logger,
): ConsumerEmit {
  if (!observer) return () => undefined;
  return (event, from = source) =>
    safeEmit(observer, { ...event, transport, source: from } as TransportConsumerEvent, logger);
}
