/**
 * What every transport's consumer and publisher tell their observer: one `{ type, … }` union,
 * the same for RabbitMQ, Kafka, SQS and the in-memory transport, so one metrics or logging
 * observer serves them all. `transport` names the transport ('rabbitmq' | 'kafka' | 'sqs' |
 * 'memory' | a third party's name); `source` is the queue / topic a consumer reads,
 * `destination` the exchange / topic / queue a publisher writes. Bounded: no payloads.
 * Called through safeEmit.
 *
 * Connection state: `connected`, `disconnected` and `lag` carry `instance`, which tells apart
 * the consumers of one process that read the same source (a metrics observer counts connected
 * consumers by it, and forgets a consumer's lag once it closed). A consumer's connection events alternate from its first `connected`
 * until its close(): `close()` of a consumer that connected ends with one `disconnected` of `reason: 'closed'`, also
 * after a `disconnected` of `reason: 'lost'` (whose retry then never comes), not after one that
 * stopped it for good (`retryInMs` null).
 */
export type TransportConsumerEvent =
  /** Deliveries arrived from the broker (before acceptance). */
  | { readonly type: 'received'; readonly transport: string; readonly source: string; readonly count: number }
  /** Deliveries the inbox accepted (new or duplicate) and that were then settled with the broker. */
  | { readonly type: 'accepted'; readonly transport: string; readonly source: string; readonly count: number }
  /** A delivery went to the dead-letter destination (or was dropped where none exists), with the reason. */
  | {
      readonly type: 'dead-lettered';
      readonly transport: string;
      readonly source: string;
      readonly reason: string;
      readonly messageId: string | null;
    }
  /** Acceptance failed for these deliveries; they come back (redelivery, retry queue, seek). */
  | {
      readonly type: 'acceptance-failed';
      readonly transport: string;
      readonly source: string;
      readonly count: number;
      readonly error: string;
      readonly delayMs: number;
    }
  /**
   * The database cannot accept, or the inbox's admission limit refused new deliveries
   * (back-pressure: `count` is then the refused deliveries, the answered ones are settled): the
   * consumer holds them, or hands them back uncounted, and offers them again after `delayMs`.
   */
  | {
      readonly type: 'acceptance-unavailable';
      readonly transport: string;
      readonly source: string;
      readonly count: number;
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: string;
    }
  /** Acceptance works again after `failures` held attempts. */
  | {
      readonly type: 'acceptance-recovered';
      readonly transport: string;
      readonly source: string;
      readonly count: number;
      readonly failures: number;
    }
  /** Consuming (re)started: connected and subscribed / joined. `assignment` where the broker assigns partitions. */
  | {
      readonly type: 'connected';
      readonly transport: string;
      readonly source: string;
      /** This consumer, unique within the process (an opaque id). */
      readonly instance: string;
      readonly assignment?: Readonly<Record<string, readonly number[]>>;
    }
  /**
   * Consuming stopped. `reason` 'lost': the connection or subscription was lost, and the
   * consumer reconnects after `retryInMs` (null: it stops). 'closed': its close() ended it
   * (`retryInMs` null).
   */
  | {
      readonly type: 'disconnected';
      readonly transport: string;
      readonly source: string;
      /** This consumer, unique within the process (an opaque id). */
      readonly instance: string;
      readonly reason: 'lost' | 'closed';
      readonly error: string;
      readonly retryInMs: number | null;
    }
  /** Offsets / acks / deletes confirmed to the broker for `count` deliveries. */
  | { readonly type: 'settled'; readonly transport: string; readonly source: string; readonly count: number }
  /**
   * How far the consumer's group is behind the newest record of a partition (Kafka), measured
   * after each commit and, where the client tells the partition's high watermark of fetches
   * without records, again periodically (a partition delivering nothing shows its lag grow). `group`: the consumer group whose committed offset it is (two groups of
   * one topic lag apart); `instance`: the consumer that reported it, as in its connection events.
   */
  | {
      readonly type: 'lag';
      readonly transport: string;
      readonly source: string;
      readonly instance: string;
      readonly group: string;
      readonly partition: number;
      readonly lag: number;
    }
  /** Anything else that went wrong and did not stop the consumer. */
  | { readonly type: 'error'; readonly transport: string; readonly source: string; readonly error: string };

export type TransportPublisherEvent =
  /** The broker confirmed `count` messages. */
  | {
      readonly type: 'published';
      readonly transport: string;
      readonly destination: string;
      readonly count: number;
      readonly durationMs: number;
    }
  /** `count` messages were not confirmed; `outcome` is what the relay will make of them. */
  | {
      readonly type: 'publish-failed';
      readonly transport: string;
      readonly destination: string;
      readonly count: number;
      readonly outcome: 'retryable' | 'permanent' | 'unavailable';
      readonly error: string;
    };

export type TransportEvent = TransportConsumerEvent | TransportPublisherEvent;
export type TransportObserver<E = TransportEvent> = (event: E) => unknown;
