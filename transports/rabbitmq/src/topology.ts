import type { Channel } from 'amqplib';
import { FerryConfigError } from '@ferry/core';
import {
  knownKeysOption,
  arrayOption,
  nonEmptyOption as nonEmpty,
  oneOfOption,
  received,
  type OptionKeys,
} from '@ferry/core/transport';
import { DEFAULTS, shortStringOption } from './options';
import { checkRetryTiers, retryTiers, tierQueueName } from './retryTiers';

/** Names of everything that belongs to one work queue. */
export interface WorkQueueNames {
  readonly queue: string;
  /** Receives what the consumer rejects (invalid, retries exhausted). */
  readonly deadLetterExchange: string;
  readonly deadLetterQueue: string;
  /** Prefix of the retry tier queues: `<retryQueue>.<ms>ms`, one per delay tier. */
  readonly retryQueue: string;
  /** The retry tier queues, shortest delay first; each holds deliveries for its fixed TTL. */
  readonly retryQueues: readonly string[];
  /** The delay (ms) of each tier, in the order of `retryQueues`. */
  readonly retryTiersMs: readonly number[];
}

export interface QueueBinding {
  readonly exchange: string;
  readonly routingKey: string;
  /**
   * Declared durable when the binding is made; default `topic`. An `x-` type is one a plugin
   * registers (`x-consistent-hash`, `x-delayed-message`, …): a broker without the plugin refuses
   * it (ready() rejects with FERRY_PERMANENT_FAILURE naming the type).
   */
  readonly exchangeType?: ExchangeType;
  /**
   * The exchange's arguments, declared with it (e.g. `{ 'x-delayed-type': 'topic' }`, which
   * `x-delayed-message` requires). An existing exchange declared with other arguments is a
   * PRECONDITION_FAILED refusal, as for a queue.
   */
  readonly exchangeArguments?: Readonly<Record<string, string | number | boolean>>;
}

/** RabbitMQ's own exchange types, or one a plugin registers (its name starts with `x-`). */
export type ExchangeType = 'topic' | 'direct' | 'fanout' | 'headers' | `x-${string}`;

export interface WorkQueueTopology {
  /** The work queue consumers read. Required. */
  queue: string;
  /**
   * Where rejected deliveries go: the dead-letter exchange (fanout; default `<queue>.dlx`) and
   * the queue bound to it (default `<queue>.dlq`).
   */
  deadLetter?: { readonly exchange?: string; readonly queue?: string };
  /** Prefix of the retry tier queues. Default `<queue>.retry`. */
  retryQueue?: string;
  /**
   * Delay tiers (ms): one retry queue per tier, each with `x-message-ttl` = the tier. Default:
   * the tiers of the default retry backoff and retry limit (see retryTiers); the consumer
   * passes the tiers of its own `retryBackoff` and `maxTransportRetries`.
   */
  retryTiersMs?: readonly number[];
  /** Exchanges the work queue is bound to. */
  bindings?: readonly QueueBinding[];
}

const TOPOLOGY_KEYS = {
  queue: true,
  deadLetter: true,
  retryQueue: true,
  retryTiersMs: true,
  bindings: true,
} as const satisfies OptionKeys<WorkQueueTopology>;

/** The topology part of `options` (a consumer's options carry its topology among other keys). */
export function pickTopology(options: WorkQueueTopology): WorkQueueTopology {
  const { queue, deadLetter, retryQueue, retryTiersMs, bindings } = options;
  return { queue, deadLetter, retryQueue, retryTiersMs, bindings };
}

export function workQueueNames(topology: WorkQueueTopology): WorkQueueNames {
  return checkedTopology(topology).names;
}

/**
 * The topology checked, as its snapshot (each option and binding read once, knownKeysOption):
 * what is declared is what was checked.
 */
function checkedTopology(topology: WorkQueueTopology): {
  readonly names: WorkQueueNames;
  readonly bindings: readonly QueueBinding[];
} {
  topology = knownKeysOption('', topology, TOPOLOGY_KEYS);
  const queue = nonEmpty('queue', topology.queue);
  const deadLetter = knownKeysOption('deadLetter.', topology.deadLetter, ['exchange', 'queue']);
  if (deadLetter !== undefined) topology = { ...topology, deadLetter };
  const retryQueue =
    topology.retryQueue === undefined ? `${queue}.retry` : nonEmpty('retryQueue', topology.retryQueue);
  const tiers = checkRetryTiers(
    topology.retryTiersMs ?? retryTiers(DEFAULTS.retryBackoff, DEFAULTS.maxTransportRetries),
  );
  const names: WorkQueueNames = {
    queue,
    deadLetterExchange: nonEmpty('deadLetter.exchange', topology.deadLetter?.exchange ?? `${queue}.dlx`),
    deadLetterQueue: nonEmpty('deadLetter.queue', topology.deadLetter?.queue ?? `${queue}.dlq`),
    retryQueue,
    retryQueues: tiers.map((ms) => tierQueueName(retryQueue, ms)),
    retryTiersMs: tiers,
  };
  const bindings = checkBindings(topology.bindings);
  checkNameLengths(names, topology);
  checkNoLoop(names, bindings);
  return { names, bindings };
}

/**
 * Every name the topology declares or consumes is an AMQP short string (at most 255 UTF-8
 * bytes): a queue name near the limit made its derived names (`<queue>.retry.16000ms`) longer,
 * and every attach failed, retried for ever. Named after the option that made the name.
 */
function checkNameLengths(names: WorkQueueNames, topology: WorkQueueTopology): void {
  const retryOption = topology.retryQueue === undefined ? 'queue' : 'retryQueue';
  const deadLetterOption = (key: 'exchange' | 'queue') =>
    topology.deadLetter?.[key] === undefined ? 'queue' : `deadLetter.${key}`;
  const checked: [string, string][] = [
    ['queue', names.queue],
    [deadLetterOption('exchange'), names.deadLetterExchange],
    [deadLetterOption('queue'), names.deadLetterQueue],
    ...names.retryQueues.map((name): [string, string] => [retryOption, name]),
  ];
  for (const [option, name] of checked) {
    shortStringOption(option, name, `makes the name ${JSON.stringify(name.slice(0, 40) + '…')}`);
  }
}

const BINDING_KEYS = {
  exchange: true,
  routingKey: true,
  exchangeType: true,
  exchangeArguments: true,
} as const satisfies OptionKeys<QueueBinding>;

const EXCHANGE_TYPES = ['topic', 'direct', 'fanout', 'headers'] as const;

/**
 * A binding's exchange type: one of RabbitMQ's own, or any `x-` name (a plugin's: RabbitMQ takes
 * every type its plugins register), at most 255 UTF-8 bytes (an AMQP short string).
 */
function checkExchangeType(option: string, exchangeType: unknown): void {
  if (typeof exchangeType === 'string' && exchangeType.startsWith('x-') && exchangeType.length > 2) {
    shortStringOption(option, exchangeType);
    return;
  }
  if (typeof exchangeType === 'string' && !(EXCHANGE_TYPES as readonly string[]).includes(exchangeType)) {
    throw new FerryConfigError(
      option,
      `must be one of ${EXCHANGE_TYPES.join(', ')} or a plugin's type (x-…), got ${received(exchangeType)}`,
    );
  }
  oneOfOption(option, exchangeType, EXCHANGE_TYPES);
}

/** Exchange arguments: a plain object of short-string names to strings, finite numbers or booleans. */
function checkExchangeArguments(option: string, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FerryConfigError(option, `must be an object of arguments, got ${received(value)}`);
  }
  for (const [name, argument] of Object.entries(value)) {
    shortStringOption(`${option}.${name}`, name, 'is a name of');
    const ok =
      typeof argument === 'string' ||
      typeof argument === 'boolean' ||
      (typeof argument === 'number' && Number.isFinite(argument));
    if (!ok) {
      throw new FerryConfigError(
        `${option}.${name}`,
        `must be a string, a finite number or a boolean, got ${received(argument)}`,
      );
    }
  }
}

/**
 * Each binding, named `bindings[<i>].<key>`: RabbitMQ answers an exchange type it does not know
 * with a connection error (503), which closes the whole connection (a publisher sharing it too):
 * a type is one of RabbitMQ's own or a plugin's `x-` name (a missing plugin is refused at attach,
 * see isRefusal); a misspelt or missing routing key bound the queue with `''`, which a topic or
 * direct exchange routes nothing to; the default exchange cannot be bound (403); an exchange or
 * routing key over 255 bytes (an AMQP short string) failed every attach, retried for ever.
 */
function checkBindings(bindings: unknown): readonly QueueBinding[] {
  if (bindings === undefined) return [];
  // Each binding's snapshot, in a copy of the array: what is bound is what was checked.
  return arrayOption('bindings', bindings, 'an array of bindings').map((given: unknown, i) => {
    const name = `bindings[${i}]`;
    if (given === undefined) throw new FerryConfigError(name, 'must be an object, got undefined');
    const binding = knownKeysOption(`${name}.`, given, BINDING_KEYS);
    const { exchange, routingKey, exchangeType, exchangeArguments } = binding as Record<string, unknown>;
    if (exchange === '') {
      throw new FerryConfigError(
        `${name}.exchange`,
        'must name an exchange: the default exchange cannot be bound',
      );
    }
    shortStringOption(`${name}.exchange`, nonEmpty(`${name}.exchange`, exchange));
    if (typeof routingKey !== 'string') {
      throw new FerryConfigError(`${name}.routingKey`, `must be a string, got ${received(routingKey)}`);
    }
    shortStringOption(`${name}.routingKey`, routingKey);
    if (exchangeType !== undefined) checkExchangeType(`${name}.exchangeType`, exchangeType);
    if (exchangeArguments !== undefined)
      checkExchangeArguments(`${name}.exchangeArguments`, exchangeArguments);
    return binding as QueueBinding;
  });
}

/**
 * Refuses names through which a copy would come back into the work queue, whether the consumer
 * declares the topology or not: a dead-letter queue that is the work queue or a retry tier, a
 * retry tier that is the work queue, a dead-letter exchange the work queue is bound to (each
 * dead letter would be delivered again, rejected again, for ever).
 */
function checkNoLoop(names: WorkQueueNames, bindings: readonly QueueBinding[]): void {
  const { queue, deadLetterQueue, deadLetterExchange, retryQueues } = names;
  if (deadLetterQueue === queue) {
    throw new FerryConfigError('deadLetter.queue', `is the work queue ${JSON.stringify(queue)}`);
  }
  if (retryQueues.includes(deadLetterQueue)) {
    throw new FerryConfigError(
      'deadLetter.queue',
      `is a retry tier queue ${JSON.stringify(deadLetterQueue)}`,
    );
  }
  if (retryQueues.includes(queue)) {
    throw new FerryConfigError(
      'retryQueue',
      `makes a retry tier queue the work queue ${JSON.stringify(queue)}`,
    );
  }
  const bound = bindings.find((binding) => binding.exchange === deadLetterExchange);
  if (bound !== undefined) {
    throw new FerryConfigError(
      'deadLetter.exchange',
      `is ${JSON.stringify(deadLetterExchange)}, an exchange the work queue is bound to (bindings): ` +
        'every dead letter would come back to the work queue',
    );
  }
}

/**
 * Declares, durably and idempotently, a work queue with:
 * - a dead-letter exchange (fanout) and queue: the work queue's `x-dead-letter-exchange`, so
 *   a broker-side reject lands there too;
 * - one retry queue per delay tier (`<retryQueue>.<ms>ms`, `x-message-ttl` = the tier) whose
 *   expired messages dead-letter back to the work queue through the default exchange. A
 *   queue-wide TTL expires every message in arrival order, so a tier never holds a short
 *   delay behind a longer one (per-message TTLs only expire at the head of the queue).
 *   The consumer publishes a retry straight to its tier queue through the default exchange.
 * Re-running it with the same arguments is a no-op; different arguments on an existing queue
 * fail with PRECONDITION_FAILED from the broker (RabbitMQ does not change queue arguments).
 */
export async function declareWorkQueue(
  channel: Channel,
  topology: WorkQueueTopology,
): Promise<WorkQueueNames> {
  const { names, bindings } = checkedTopology(topology);
  await channel.assertExchange(names.deadLetterExchange, 'fanout', { durable: true });
  await channel.assertQueue(names.deadLetterQueue, { durable: true });
  await channel.bindQueue(names.deadLetterQueue, names.deadLetterExchange, '');
  for (const [i, retryQueue] of names.retryQueues.entries()) {
    await channel.assertQueue(retryQueue, {
      durable: true,
      arguments: {
        'x-message-ttl': names.retryTiersMs[i]!,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': names.queue,
      },
    });
  }
  await channel.assertQueue(names.queue, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': names.deadLetterExchange },
  });
  for (const binding of bindings) {
    await channel.assertExchange(binding.exchange, binding.exchangeType ?? 'topic', {
      durable: true,
      ...(binding.exchangeArguments === undefined ? {} : { arguments: { ...binding.exchangeArguments } }),
    });
    await channel.bindQueue(names.queue, binding.exchange, binding.routingKey);
  }
  return names;
}

/** Deletes a work queue and its retry tier / dead-letter companions (tests and teardown). */
export async function deleteWorkQueue(channel: Channel, topology: WorkQueueTopology): Promise<void> {
  const names = workQueueNames(topology);
  await channel.deleteQueue(names.queue);
  for (const retryQueue of names.retryQueues) await channel.deleteQueue(retryQueue);
  await channel.deleteQueue(names.deadLetterQueue);
  await channel.deleteExchange(names.deadLetterExchange);
}
