import { checkListenUrl } from '../wake/notifyListener';
import { FerryConfigError } from '../errors';
import { knownKeysOption, received, requiredOptions, type OptionKeys } from '../optionChecks';
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

function hasMethod(value: unknown, method: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[method] === 'function'
  );
}

/**
 * Checks createRelay's argument the way every options object is checked (unknown keys, types,
 * the received value shown); the numeric and policy options inside `options` are
 * resolveOutboxOptions's job.
 */
export function checkRelayConfig(config: RelayConfig): void {
  requiredOptions(config, 'db and publisher');
  knownKeysOption('', config, RELAY_CONFIG_KEYS);
  if ((typeof config.db !== 'object' || config.db === null) && config.store === undefined) {
    throw new FerryConfigError(
      'db',
      `must be a SqlExecutor such as fromPrisma(prisma), got ${received(config.db)}`,
    );
  }
  if (!hasMethod(config.publisher, 'publish')) {
    throw new FerryConfigError(
      'publisher',
      `must be a Publisher with publish(messages, signal), got ${received(config.publisher)}`,
    );
  }
  if (config.listenUrl !== undefined) checkListenUrl('listenUrl', config.listenUrl);
  observerOption(config.observer);
  loggerOption('logger', config.logger);
}
