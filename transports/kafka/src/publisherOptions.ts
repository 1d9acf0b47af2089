import type { Logger } from '@ferry/core';
import {
  functionOption,
  integerOption as integer,
  timerOption,
  nonEmptyOption as nonEmpty,
  knownKeysOption,
  type OptionKeys,
  type TransportObserver,
  type TransportPublisherEvent,
  loggerOption,
} from '@ferry/core/transport';
import { DEFAULTS } from './options';
import type { TopicRouting } from './wire';

export interface PublisherOptions {
  /** Topic for events without a destination and without a route. */
  defaultDestination?: string;
  /** Topic by event type, for events without a destination. */
  routes?: Readonly<Record<string, string>>;
  /** A send not confirmed within this many ms is reported retryable (not sent). Default 30000. */
  confirmTimeoutMs?: number;
  /**
   * The longest close() waits for the client to finish (sends in flight, at most
   * `confirmTimeoutMs`, and its disconnect) before it destroys what is left of it (its sockets):
   * a cluster gone silent answers none of it, and a process given 30 s to stop must. Sends in
   * flight are reported retryable at once by close(). Default 10000 (as the consumer's). On
   * kafkajs a quarter of it also bounds the client's waits between its retries (the connection's
   * kafkaConfig.retry): close() waits out the retry pending, none runs after close() resolved.
   */
  closeTimeoutMs?: number;
  /**
   * Larger payloads are reported permanent without being sent. Also the most one send to the
   * client carries: a larger publish goes in several sends (requestChunks.ts). Default 1048576,
   * the broker's default message.max.bytes.
   */
  maxMessageBytes?: number;
  /**
   * Client retries per send (metadata, leader moves, connection loss) before it gives up and
   * the messages are reported retryable. Bounded on purpose: with kafkajs's idempotent default
   * (unlimited) a send to a missing topic retries forever, even after close().
   */
  producerRetries?: number;
  /** Default: the connection's logger. */
  logger?: Logger;
  /**
   * Told how each publish call ended (through safeEmit, `transport: 'kafka'`, `destination`:
   * the topic): `published`, `publish-failed`.
   */
  observer?: TransportObserver<TransportPublisherEvent>;
}

export interface ResolvedPublisherOptions {
  readonly routing: TopicRouting;
  readonly confirmTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly maxMessageBytes: number;
  readonly producerRetries: number;
  readonly logger: Logger | undefined;
  readonly observer: TransportObserver<TransportPublisherEvent> | undefined;
}

export const PUBLISHER_OPTION_KEYS = {
  defaultDestination: true,
  routes: true,
  confirmTimeoutMs: true,
  closeTimeoutMs: true,
  maxMessageBytes: true,
  producerRetries: true,
  logger: true,
  observer: true,
} as const satisfies OptionKeys<PublisherOptions>;

/** Checks a publisher's options and fills the defaults; throws FerryConfigError naming the option. */
export function resolvePublisherOptions(options: PublisherOptions = {}): ResolvedPublisherOptions {
  options = knownKeysOption('', options, PUBLISHER_OPTION_KEYS);
  // No prototype: an event type named like an Object member (`constructor`, `toString`) finds no
  // route of its own and falls through to defaultDestination (review 47).
  const routes: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [type, topic] of Object.entries(options.routes ?? {}))
    routes[type] = nonEmpty(`routes.${type}`, topic);
  return {
    routing: {
      defaultDestination:
        options.defaultDestination === undefined
          ? null
          : nonEmpty('defaultDestination', options.defaultDestination),
      routes,
    },
    confirmTimeoutMs: timerOption(
      'confirmTimeoutMs',
      options.confirmTimeoutMs ?? DEFAULTS.publisher.confirmTimeoutMs,
      1,
    ),
    closeTimeoutMs: timerOption(
      'closeTimeoutMs',
      options.closeTimeoutMs ?? DEFAULTS.publisher.closeTimeoutMs,
      1,
    ),
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
    logger: loggerOption('logger', options.logger),
    observer: functionOption('observer', options.observer),
  };
}
