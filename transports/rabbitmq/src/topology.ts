import type { Channel } from 'amqplib';
import { FerryConfigError } from '@ferry/core';
import { integerOption as integer, nonEmptyOption as nonEmpty } from '@ferry/core';
import { DEFAULTS } from './options';

/** Names of everything that belongs to one work queue. */
export interface WorkQueueNames {
  readonly queue: string;
  /** Receives what the consumer rejects (invalid, retries exhausted). */
  readonly deadLetterExchange: string;
  readonly deadLetterQueue: string;
  /** Holds deliveries whose acceptance failed until their TTL sends them back to `queue`. */
  readonly retryExchange: string;
  readonly retryQueue: string;
}

export interface QueueBinding {
  readonly exchange: string;
  readonly routingKey: string;
  /** Declared durable when the binding is made; default `topic`. */
  readonly exchangeType?: 'topic' | 'direct' | 'fanout' | 'headers';
}

export interface WorkQueueTopology {
  /** The work queue consumers read. Required. */
  queue: string;
  /** Default `<queue>.dlx`. */
  deadLetterExchange?: string;
  /** Default `<queue>.dlq`. */
  deadLetterQueue?: string;
  /** Default `<queue>.retry`. */
  retryExchange?: string;
  /** Default `<queue>.retry`. */
  retryQueue?: string;
  /** Upper bound on any retry delay: the retry queue's `x-message-ttl`. Default 60000. */
  maxRetryDelayMs?: number;
  /** Exchanges the work queue is bound to. */
  bindings?: readonly QueueBinding[];
}

export function workQueueNames(topology: WorkQueueTopology): WorkQueueNames {
  const queue = nonEmpty('queue', topology.queue);
  return {
    queue,
    deadLetterExchange: topology.deadLetterExchange ?? `${queue}.dlx`,
    deadLetterQueue: topology.deadLetterQueue ?? `${queue}.dlq`,
    retryExchange: topology.retryExchange ?? `${queue}.retry`,
    retryQueue: topology.retryQueue ?? `${queue}.retry`,
  };
}

/**
 * Declares, durably and idempotently, a work queue with:
 * - a dead-letter exchange (fanout) and queue: the work queue's `x-dead-letter-exchange`, so
 *   a broker-side reject lands there too;
 * - a retry exchange (fanout) and queue whose expired messages dead-letter back to the work
 *   queue through the default exchange (per-message `expiration` sets the backoff; the queue's
 *   `x-message-ttl` caps it).
 * Re-running it with the same arguments is a no-op; different arguments on an existing queue
 * fail with PRECONDITION_FAILED from the broker (RabbitMQ does not change queue arguments).
 */
export async function declareWorkQueue(
  channel: Channel,
  topology: WorkQueueTopology,
): Promise<WorkQueueNames> {
  const names = workQueueNames(topology);
  const maxRetryDelayMs = integer(
    'maxRetryDelayMs',
    topology.maxRetryDelayMs ?? DEFAULTS.retryBackoff.maxMs,
    1,
    2 ** 32 - 1,
  );
  const distinct = new Set([names.queue, names.deadLetterQueue, names.retryQueue]);
  if (distinct.size !== 3) {
    throw new FerryConfigError('queue', 'the work, dead-letter and retry queues must have distinct names');
  }
  await channel.assertExchange(names.deadLetterExchange, 'fanout', { durable: true });
  await channel.assertQueue(names.deadLetterQueue, { durable: true });
  await channel.bindQueue(names.deadLetterQueue, names.deadLetterExchange, '');
  await channel.assertExchange(names.retryExchange, 'fanout', { durable: true });
  await channel.assertQueue(names.retryQueue, {
    durable: true,
    arguments: {
      'x-message-ttl': maxRetryDelayMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': names.queue,
    },
  });
  await channel.bindQueue(names.retryQueue, names.retryExchange, '');
  await channel.assertQueue(names.queue, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': names.deadLetterExchange },
  });
  for (const binding of topology.bindings ?? []) {
    await channel.assertExchange(binding.exchange, binding.exchangeType ?? 'topic', { durable: true });
    await channel.bindQueue(names.queue, binding.exchange, binding.routingKey);
  }
  return names;
}

/** Deletes a work queue and its retry / dead-letter companions (tests and teardown). */
export async function deleteWorkQueue(channel: Channel, topology: WorkQueueTopology): Promise<void> {
  const names = workQueueNames(topology);
  await channel.deleteQueue(names.queue);
  await channel.deleteQueue(names.retryQueue);
  await channel.deleteQueue(names.deadLetterQueue);
  await channel.deleteExchange(names.retryExchange);
  await channel.deleteExchange(names.deadLetterExchange);
}
