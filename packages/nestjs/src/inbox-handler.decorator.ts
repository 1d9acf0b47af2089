import { SetMetadata } from '@nestjs/common';
import { INBOX_HANDLER_METADATA } from './tokens';

/**
 * Marks a provider method as the inbox handler of `consumer`. The method is called as
 * `method(payload, context)` inside the worker's handler transaction (`context.tx`);
 * throwing schedules a retry, InboxPermanentError makes the receipt DEAD.
 */
export function InboxHandler(consumer: string): MethodDecorator {
  if (typeof consumer !== 'string' || consumer.length === 0) {
    throw new TypeError('@InboxHandler() needs a non-empty consumer name');
  }
  return SetMetadata(INBOX_HANDLER_METADATA, consumer);
}
