/** Internal injection tokens. Applications inject the service classes, not these. */
export const OUTBOX_MODULE_OPTIONS = Symbol('ferry.outbox.moduleOptions');
export const OUTBOX_RESOLVED = Symbol('ferry.outbox.resolved');
export const OUTBOX_PUBLISHER = Symbol('ferry.outbox.publisher');
export const INBOX_MODULE_OPTIONS = Symbol('ferry.inbox.moduleOptions');
export const INBOX_REGISTRATION = Symbol('ferry.inbox.registration');
/** Metadata key of @InboxHandler() on a provider method. */
export const INBOX_HANDLER_METADATA = 'ferry:inbox-handler';
