import { checkListenUrl } from '../wake/notifyListener';
import {
  executorOption,
  knownKeysOption,
  methodsOption,
  requiredOptions,
  type OptionKeys,
} from '../optionChecks';
import type { Publisher } from '../contracts';
import { loggerOption, type Logger } from '../observe/logger';
import type { SqlExecutor } from '../sql/executor';
import type { OutboxObserver } from './events';
import { observerOption } from './observer';
import type { OutboxOptions, ResolvedOutboxOptions } from './options';
import type { RelayStore } from './store';

export interface RelayConfig {
  db: SqlExecutor;
  publisher: Publisher;
  /** Connection string for the dedicated LISTEN connection; without it the relay only polls. */
  listenUrl?: string;
  /** Options as written, or what resolveOutboxOptions returned (then used as they are). */
  options?: OutboxOptions | ResolvedOutboxOptions;
  /** Called with every OutboxEvent, through safeEmit. */
  observer?: OutboxObserver;
  logger?: Logger;
  /** Replaces the SQL transitions (tests, instrumentation). */
  store?: RelayStore;
  /** The circuit breaker's clock in milliseconds (tests; defaults to Date.now). */
  clock?: () => number;
}

const RELAY_CONFIG_KEYS = {
  db: true,
  publisher: true,
  listenUrl: true,
  options: true,
  observer: true,
  logger: true,
  store: true,
  clock: true,
} as const satisfies OptionKeys<RelayConfig>;

/**
 * Checks createRelay's argument the way every options object is checked (unknown keys, types,
 * the received value shown); the numeric and policy options inside `options` are
 * resolveOutboxOptions's job. Returns the snapshot to use instead of `config` (knownKeysOption).
 */
export function checkRelayConfig(config: RelayConfig): RelayConfig {
  requiredOptions(config, 'db and publisher');
  // Its snapshot from here on: every option read once (knownKeysOption), the value checked is the one used.
  config = knownKeysOption('', config, RELAY_CONFIG_KEYS);
  if (config.store === undefined) executorOption('db', config.db);
  methodsOption('publisher', config.publisher, ['publish'], 'a Publisher with publish(messages, signal)');
  if (config.listenUrl !== undefined) checkListenUrl('listenUrl', config.listenUrl);
  observerOption(config.observer);
  loggerOption('logger', config.logger);
  return config;
}
