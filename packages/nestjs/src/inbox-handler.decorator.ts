import { INBOX_HANDLER_METADATA } from './tokens';

/**
 * Marks a provider method as the inbox handler of `consumer`. The method is called as
 * `method(payload, context)` inside the worker's handler transaction (`context.tx`);
 * throwing schedules a retry, InboxPermanentError makes the receipt DEAD. A method may carry
 * several (one per consumer it serves); a static method is called on its class.
 */
export function InboxHandler(consumer: string): MethodDecorator {
  if (typeof consumer !== 'string' || consumer.length === 0) {
    throw new TypeError('@InboxHandler() needs a non-empty consumer name');
  }
  return (_target, key, descriptor) => {
    const method: unknown = descriptor?.value;
    if (typeof method !== 'function') {
      throw new TypeError(`@InboxHandler('${consumer}') decorates a method, not ${String(key)}`);
    }
    // Every decoration of the method is kept (SetMetadata would keep only the outermost one).
    const consumers = inboxHandlerConsumers(method);
    Reflect.defineMetadata(INBOX_HANDLER_METADATA, [...consumers, consumer], method);
  };
}

/** The consumer names `@InboxHandler()` put on `method`, innermost decorator first. */
export function inboxHandlerConsumers(method: unknown): readonly string[] {
  if (typeof method !== 'function') return [];
  const names: unknown = Reflect.getOwnMetadata(INBOX_HANDLER_METADATA, method);
  return Array.isArray(names) ? (names as string[]) : [];
}
