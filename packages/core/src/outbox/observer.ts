import { FerryConfigError } from '../errors';
import { received } from '../optionChecks';
import type { OutboxObserver } from './events';

/**
 * Checks an outbox `observer` option (createRelay, createEmitter): undefined or a function of
 * OutboxEvent. An object (the hooks 0.x took before) is refused with the way to migrate.
 */
export function observerOption(value: unknown): OutboxObserver | undefined {
  if (value === undefined || typeof value === 'function') return value as OutboxObserver | undefined;
  const hooks = typeof value === 'object' && value !== null && !Array.isArray(value);
  throw new FerryConfigError(
    'observer',
    hooks
      ? `must be a function: observer is now a function of { type } events, see CHANGELOG (got an object of hooks: ${Object.keys(value).join(', ') || 'none'})`
      : `must be a function of { type } events, got ${received(value)}`,
  );
}
