import type { Logger } from '@ferry/core';
import {
  functionOption,
  timerOption,
  knownKeysOption,
  recordOption,
  received,
  type OptionKeys,
  type TransportObserver,
  type TransportPublisherEvent,
  loggerOption,
} from '@ferry/core/transport';
import { FerryConfigError } from '@ferry/core';
import { DEFAULTS, shortStringOption } from './options';

export interface Route {
  readonly exchange: string;
  /** Default: the event type. */
  readonly routingKey?: string;
}

export interface RabbitPublisherOptions {
  /** Route per event type, used when an event names no destination. */
  routes?: Readonly<Record<string, Route>>;
  /**
   * Where events with neither a destination nor a route go, written like a destination:
   * `exchange` (routing key = the type) or `exchange/routingKey`.
   */
  defaultDestination?: string;
  /** A message not confirmed within this many milliseconds is reported retryable. Default 10000. */
  confirmTimeoutMs?: number;
  /** AMQP `appId` property. */
  appId?: string;
  logger?: Logger;
  /**
   * Told how each publish call ended (through safeEmit, `transport: 'rabbitmq'`, `destination`:
   * the exchange, or the queue for the default exchange): `published`, `publish-failed`.
   */
  observer?: TransportObserver<TransportPublisherEvent>;
}

/** Every publisher option key; unknown keys are rejected (FERRY_CONFIG_INVALID). */
export const PUBLISHER_OPTION_KEYS = {
  routes: true,
  defaultDestination: true,
  confirmTimeoutMs: true,
  appId: true,
  logger: true,
  observer: true,
} as const satisfies OptionKeys<RabbitPublisherOptions>;

/** A publisher's options, checked once, with every default filled in. */
export interface ResolvedPublisherOptions {
  readonly routes: Readonly<Record<string, Route>>;
  readonly defaultDestination: string | undefined;
  readonly confirmTimeoutMs: number;
  readonly appId: string | undefined;
  readonly logger: Logger | undefined;
  readonly observer: TransportObserver<TransportPublisherEvent> | undefined;
}

/** Checks a publisher's options and fills the defaults; throws FerryConfigError naming the option. */
export function resolvePublisherOptions(options: RabbitPublisherOptions = {}): ResolvedPublisherOptions {
  options = knownKeysOption('', options, PUBLISHER_OPTION_KEYS);
  if (options.defaultDestination !== undefined && typeof options.defaultDestination !== 'string') {
    throw new FerryConfigError(
      'defaultDestination',
      `must be a string, got ${received(options.defaultDestination)}`,
    );
  }
  if (options.defaultDestination !== undefined) {
    // Its routing key, when it names none, is each event's type: checked per event (overlongRoute).
    const slash = options.defaultDestination.indexOf('/');
    shortStringOption(
      'defaultDestination',
      options.defaultDestination.slice(0, slash < 0 ? undefined : slash),
    );
    if (slash >= 0) shortStringOption('defaultDestination', options.defaultDestination.slice(slash + 1));
  }
  if (options.appId !== undefined) {
    if (typeof options.appId !== 'string') {
      throw new FerryConfigError('appId', `must be a string, got ${received(options.appId)}`);
    }
    shortStringOption('appId', options.appId);
  }
  return {
    routes: checkRoutes(options.routes),
    defaultDestination: options.defaultDestination,
    confirmTimeoutMs: timerOption(
      'confirmTimeoutMs',
      options.confirmTimeoutMs ?? DEFAULTS.confirmTimeoutMs,
      1,
    ),
    appId: options.appId,
    logger: loggerOption('logger', options.logger),
    observer: functionOption('observer', options.observer),
  };
}

const ROUTE_KEYS = { exchange: true, routingKey: true } as const satisfies OptionKeys<Route>;

/** Each route `{ exchange, routingKey? }`, named `routes.<type>.<key>` (the exchange may be '', AMQP's default). */
function checkRoutes(routes: RabbitPublisherOptions['routes']): Readonly<Record<string, Route>> {
  routes = recordOption('routes.', routes);
  for (const [type, given] of Object.entries(routes ?? {})) {
    const route = knownKeysOption(`routes.${type}.`, given, ROUTE_KEYS);
    if (typeof route?.exchange !== 'string') {
      throw new FerryConfigError(
        `routes.${type}.exchange`,
        `must be a string, got ${received(route?.exchange)}`,
      );
    }
    if (route.routingKey !== undefined && typeof route.routingKey !== 'string') {
      throw new FerryConfigError(
        `routes.${type}.routingKey`,
        `must be a string, got ${received(route.routingKey)}`,
      );
    }
    shortStringOption(`routes.${type}.exchange`, route.exchange);
    if (route.routingKey !== undefined) shortStringOption(`routes.${type}.routingKey`, route.routingKey);
  }
  return routes ?? {};
}
