import type { Logger } from '../observe/logger';
import { OUTBOX_DEFAULTS } from '../outbox/options';
import { NotifyListener } from '../wake/notifyListener';

/** The channel acceptance notifies (pg_notify in the insert statement) and the worker LISTENs on. */
export const INBOX_CHANNEL = 'ferry_inbox';

/**
 * The worker's LISTEN connection, with the relay's reconnect and keepalive defaults
 * (OUTBOX_DEFAULTS listen.*). A notification only shortens the worker's wait; polling
 * always runs.
 */
export function inboxListener(listenUrl: string, onNotify: () => void, logger: Logger): NotifyListener {
  return new NotifyListener({
    connectionString: listenUrl,
    channel: INBOX_CHANNEL,
    reconnectInitialDelay: OUTBOX_DEFAULTS['listen.reconnectInitialDelay'].default,
    reconnectMaxDelay: OUTBOX_DEFAULTS['listen.reconnectMaxDelay'].default,
    keepaliveInterval: OUTBOX_DEFAULTS['listen.keepaliveInterval'].default,
    keepaliveTimeout: OUTBOX_DEFAULTS['listen.keepaliveTimeout'].default,
    onNotify,
    logger,
  });
}
