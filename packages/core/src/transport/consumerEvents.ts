import { randomUUID } from 'node:crypto';
import type { Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import { stripUrlCredentials } from '../redact/urlCredentials';
import type { TransportConsumerEvent, TransportObserver } from './events';
import { escapeUnshowable } from '../validate/text';
import { IDENTIFIER_LIMITS } from '../validate/identifierLimits';

/** What the emitter fills in: where an event comes from; which consumer, and why a disconnect. */
type WithoutOrigin<E> = E extends { type: 'connected' | 'disconnected' }
  ? Omit<E, 'transport' | 'source' | 'instance' | 'reason'>
  : E extends { type: 'lag' }
    ? Omit<E, 'transport' | 'source' | 'instance'>
    : E extends unknown
      ? Omit<E, 'transport' | 'source'>
      : never;

/**
 * A consumer event as a transport writes it: the emitter adds `transport`, `source` and, to
 * the connection and lag events, `instance`; a `disconnected` it is handed is `reason: 'lost'`.
 */
export type ConsumerEventBody = WithoutOrigin<TransportConsumerEvent>;

/** Emits one event; `source` overrides the consumer's own (a Kafka consumer reads several topics). */
export type ConsumerEmit = (event: ConsumerEventBody, source?: string) => void;

/** A consumer's emitter, which remembers whether the consumer is connected. */
export type ConsumerEmitter = ConsumerEmit & {
  /**
   * Called once the consumer's close() ended it: a consumer that connected once reports one
   * `disconnected` of `reason: 'closed'` (`retryInMs` null), also when it had lost its connection
   * (its `disconnected` of `reason: 'lost'` promised a retry that will not come: an observer
   * keeping its lag until then kept it for good); one that never connected reports nothing.
   * Nothing is reported after it (what the consumer still does once closed, a session ending, a
   * batch close() gave up on, is not the observer's any more). Safe twice.
   */
  readonly closed: () => void;
};

/**
 * The one way a consumer reports to its observer: every event gets the transport's name and
 * the queue / topic it came from, connection events the consumer's `instance`, and each goes
 * through safeEmit (a throwing observer is logged and changes nothing).
 */
export function consumerEmitter(
  transport: string,
  sourceName: string,
  observer: TransportObserver<TransportConsumerEvent> | undefined,
  logger?: Logger,
): ConsumerEmitter {
  const instance = randomUUID();
  // A queue URL may hold a user and password: no event shows them (review 124: outage events did).
  const source = stripUrlCredentials(sourceName);
  // The source of the consumer's last `connected`; null before the first, once closed and once
  // stopped for good.
  let connectedFrom: string | null = null;
  // Set by closed(): the consumer's events end with its close (review 124: a session the client
  // crashed after a close() from inside the observer's `connected` reported a `disconnected`
  // after the closed one, and a batch close() gave up on reports on after it).
  let ended = false;
  const emit: ConsumerEmit = (event, from = source) => {
    if (ended) return;
    let full: TransportConsumerEvent;
    if (event.type === 'connected') {
      connectedFrom = from;
      full = { ...event, transport, source: from, instance };
    } else if (event.type === 'disconnected') {
      // One that stopped for good (no retry) has said so: close() adds nothing.
      if (event.retryInMs === null) connectedFrom = null;
      full = { ...event, transport, source: from, instance, reason: 'lost' };
    } else if (event.type === 'lag') {
      full = { ...event, transport, source: from, instance };
    } else if (event.type === 'dead-lettered') {
      full = { ...event, messageId: reportedMessageId(event.messageId), transport, source: from };
    } else {
      full = { ...event, transport, source: from } as TransportConsumerEvent;
    }
    if (observer) safeEmit(observer, full, logger);
  };
  const closed = () => {
    if (ended) return;
    ended = true;
    if (connectedFrom === null) return;
    const event: TransportConsumerEvent = {
      type: 'disconnected',
      transport,
      source: connectedFrom,
      instance,
      reason: 'closed',
      error: 'consumer closed',
      retryInMs: null,
    };
    connectedFrom = null;
    if (observer) safeEmit(observer, event, logger);
  };
  return Object.assign(emit, { closed });
}

/**
 * A delivery's message id as a consumer reports it (dead-letter events, log fields): the id of
 * an invalid delivery has no limit yet (a Kafka header can hold about 1 MB), so it is cut to
 * IDENTIFIER_LIMITS.messageId characters (its length said), and escaped (escapeUnshowable) so it
 * stays on its line: one hostile delivery cannot make every observer event and log line huge or
 * forge one (review 37's note).
 */
export function reportedMessageId(id: string | null): string | null {
  if (id === null) return null;
  const max = IDENTIFIER_LIMITS.messageId;
  const cut = id.length > max ? `${id.slice(0, max)}… (${id.length} characters)` : id;
  return escapeUnshowable(cut);
}
