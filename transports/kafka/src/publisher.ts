import {
  integerOption as integer,
  nonEmptyOption as nonEmpty,
  type OutboxMessage,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import type { Producer, TopicMessages } from 'kafkajs';
import type { KafkaConnection } from './connection';
import { classifyKafkaError, closedError, describeError, transportError } from './errors';
import { DEFAULTS } from './options';
import { encodeOutboxMessage, type OutboundRecord, type TopicRouting } from './wire';

export interface PublisherOptions {
  connection: KafkaConnection;
  /** Topic for events without a destination and without a route. */
  defaultTopic?: string;
  /** Topic by event type, for events without a destination. */
  routes?: Readonly<Record<string, string>>;
  /** A send not confirmed within this time is reported retryable (not sent). */
  sendTimeoutMs?: number;
  /** Larger payloads are reported permanent without being sent. */
  maxMessageBytes?: number;
  /**
   * kafkajs retries per send (metadata, leader moves, connection loss) before it gives up and
   * the messages are reported retryable. Bounded on purpose: with kafkajs's idempotent default
   * (unlimited) a send to a missing topic retries forever, even after close().
   */
  producerRetries?: number;
}

interface ResolvedPublisherOptions {
  readonly routing: TopicRouting;
  readonly sendTimeoutMs: number;
  readonly maxMessageBytes: number;
  readonly producerRetries: number;
}

function resolvePublisherOptions(options: PublisherOptions): ResolvedPublisherOptions {
  const routes: Record<string, string> = {};
  for (const [type, topic] of Object.entries(options.routes ?? {}))
    routes[type] = nonEmpty(`routes.${type}`, topic);
  return {
    routing: {
      defaultTopic:
        options.defaultTopic === undefined ? null : nonEmpty('defaultTopic', options.defaultTopic),
      routes,
    },
    sendTimeoutMs: integer('sendTimeoutMs', options.sendTimeoutMs ?? DEFAULTS.publisher.sendTimeoutMs, 1),
    maxMessageBytes: integer(
      'maxMessageBytes',
      options.maxMessageBytes ?? DEFAULTS.publisher.maxMessageBytes,
      1,
    ),
    producerRetries: integer(
      'producerRetries',
      options.producerRetries ?? DEFAULTS.publisher.producerRetries,
      1,
      100,
    ),
  };
}

const retryable = (id: string, error: string): PublishOutcome => ({ id, status: 'retryable', error });

/**
 * Outbox publisher over an idempotent kafkajs producer (acks -1, one request in flight per
 * broker, so per-key order survives retries). A message is `sent` only once the `sendBatch`
 * carrying it resolved; timeouts, aborts and producer disconnects report it `retryable`.
 */
export class KafkaPublisher implements Publisher {
  private readonly options: ResolvedPublisherOptions;
  private readonly producer: Producer;
  private connecting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  /** Aborted when the producer disconnects, so every in-flight send is reported not sent. */
  private inFlight = new AbortController();
  /** kafkajs sends that have not settled yet (they may outlive the outcome we reported). */
  private readonly unsettled = new Set<Promise<unknown>>();

  constructor(
    private readonly connection: KafkaConnection,
    options: Omit<PublisherOptions, 'connection'> = {},
  ) {
    this.options = resolvePublisherOptions({ ...options, connection });
    this.producer = connection.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { retries: this.options.producerRetries },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connecting = null;
      this.inFlight.abort(new Error('Kafka producer disconnected'));
      this.inFlight = new AbortController();
    });
  }

  /** Connects the producer; safe to call twice or concurrently. Throws FERRY_TRANSPORT_ERROR / FERRY_CLOSED. */
  async connect(): Promise<void> {
    if (this.closing) throw closedError('KafkaPublisher');
    this.connecting ??= this.producer.connect().catch((error: unknown) => {
      this.connecting = null;
      throw transportError('connecting the Kafka producer failed', error);
    });
    await this.connecting;
  }

  async publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    const outcomes = new Map<string, PublishOutcome>();
    const records: OutboundRecord[] = [];
    for (const message of messages) {
      const encoded = encodeOutboxMessage(message, this.options.routing, this.options.maxMessageBytes);
      if (encoded.ok) records.push(encoded.record);
      else outcomes.set(message.id, { id: message.id, status: 'permanent', error: encoded.error });
    }
    if (records.length > 0) {
      for (const outcome of await this.sendAll(records, signal)) outcomes.set(outcome.id, outcome);
    }
    return messages.map((message) => outcomes.get(message.id) ?? retryable(message.id, 'no outcome'));
  }

  private async sendAll(records: readonly OutboundRecord[], signal: AbortSignal): Promise<PublishOutcome[]> {
    if (this.closing) return records.map((record) => retryable(record.id, 'publisher is closed'));
    if (signal.aborted)
      return records.map((record) => retryable(record.id, 'publish aborted before sending'));
    try {
      await this.connect();
      await this.send(records, signal);
      return records.map((record) => ({ id: record.id, status: 'sent' }));
    } catch (error) {
      const failure = classifyKafkaError(error);
      if (failure.retriable || records.length === 1) {
        const status = failure.retriable ? 'retryable' : 'permanent';
        return records.map((record) => ({ id: record.id, status, error: failure.message }));
      }
      return this.sendOneByOne(records, signal);
    }
  }

  /**
   * After a permanent batch failure, finds the offending messages by sending one at a time, in
   * order; once a key had a failure its later messages are not sent, so per-key order holds.
   */
  private async sendOneByOne(
    records: readonly OutboundRecord[],
    signal: AbortSignal,
  ): Promise<PublishOutcome[]> {
    const failedKeys = new Set<string>();
    const outcomes: PublishOutcome[] = [];
    for (const record of records) {
      if (record.key !== null && failedKeys.has(record.key)) {
        outcomes.push(retryable(record.id, 'an earlier message with the same key was not sent'));
        continue;
      }
      try {
        await this.send([record], signal);
        outcomes.push({ id: record.id, status: 'sent' });
      } catch (error) {
        const failure = classifyKafkaError(error);
        if (record.key !== null) failedKeys.add(record.key);
        outcomes.push({
          id: record.id,
          status: failure.retriable ? 'retryable' : 'permanent',
          error: failure.message,
        });
      }
    }
    return outcomes;
  }

  /** One `sendBatch`; rejects on broker error, timeout, abort or producer disconnect. */
  private async send(records: readonly OutboundRecord[], signal: AbortSignal): Promise<void> {
    const byTopic = new Map<string, TopicMessages>();
    for (const record of records) {
      let entry = byTopic.get(record.topic);
      if (!entry) {
        entry = { topic: record.topic, messages: [] };
        byTopic.set(record.topic, entry);
      }
      entry.messages.push({ key: record.key, value: record.value, headers: record.headers });
    }
    const sending = this.producer.sendBatch({ acks: -1, topicMessages: [...byTopic.values()] });
    const settled = sending.then(
      () => undefined,
      () => undefined,
    );
    this.unsettled.add(settled);
    void settled.then(() => this.unsettled.delete(settled));
    await raceAbort(sending, [signal, this.inFlight.signal], this.options.sendTimeoutMs);
  }

  /**
   * Reports in-flight sends retryable at once, lets kafkajs finish them (at most `sendTimeoutMs`,
   * so no retry reconnects a disconnected producer), then disconnects. Safe to call twice.
   */
  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.inFlight.abort(new Error('Kafka publisher closed'));
      const connecting = this.connecting;
      if (connecting) await connecting.catch(() => undefined);
      await settleWithin([...this.unsettled], this.options.sendTimeoutMs);
      await this.producer.disconnect().catch((error: unknown) => {
        this.connection.logger.warn({ err: describeError(error) }, 'Kafka producer disconnect failed');
      });
    })();
    await this.closing;
  }
}

/** Settles with `work`, or rejects as soon as a signal aborts or the deadline passes. */
function raceAbort(
  work: Promise<unknown>,
  signals: readonly AbortSignal[],
  timeoutMs: number,
): Promise<void> {
  work.catch(() => undefined);
  return new Promise<void>((resolve, reject) => {
    const cleanups: (() => void)[] = [];
    const settle = (fn: () => void) => {
      for (const cleanup of cleanups) cleanup();
      fn();
    };
    const timer = setTimeout(
      () => settle(() => reject(new Error(`send not confirmed within ${timeoutMs} ms`))),
      timeoutMs,
    );
    cleanups.push(() => clearTimeout(timer));
    for (const signal of signals) {
      const onAbort = () =>
        settle(() => reject(new Error(`send abandoned: ${describeError(signal.reason)}`)));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      cleanups.push(() => signal.removeEventListener('abort', onAbort));
    }
    work.then(
      () => settle(resolve),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/** Resolves once every promise settled or `ms` passed, whichever comes first. */
async function settleWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([Promise.allSettled(promises), deadline]);
  clearTimeout(timer);
}
