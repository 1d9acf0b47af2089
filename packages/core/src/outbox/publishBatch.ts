import type { OutboxMessage, Publisher, PublishOutcome } from '../contracts';
import { FerryError } from '../errors';
import { retryDelayMs } from './backoff';
import { Heartbeat } from './heartbeat';
import type { ResolvedOutboxOptions } from './options';
import type { Completion } from './sql/completeBatch';
import type { RelayStore } from './store';

export type PublishResult =
  | { readonly kind: 'lost'; readonly reason: string }
  | { readonly kind: 'done'; readonly completions: Completion[] };

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Turns the publisher's outcomes into completions; a message without an outcome is retryable. */
export function toCompletions(
  messages: readonly OutboxMessage[],
  outcomes: readonly PublishOutcome[],
  fallbackError: string,
  retry: ResolvedOutboxOptions['retry'],
): Completion[] {
  const byId = new Map(outcomes.map((o) => [o.id, o]));
  return messages.map((message) => {
    const delayMs = retryDelayMs(retry, message.attempt);
    const outcome = byId.get(message.id);
    if (outcome?.status === 'sent') return { id: message.id, kind: 'sent', error: null, delayMs };
    if (outcome)
      return { id: message.id, kind: outcome.status, error: outcome.error.slice(0, 4_000), delayMs };
    return { id: message.id, kind: 'retryable', error: fallbackError, delayMs };
  });
}

/**
 * Publishes one claimed batch while a heartbeat renews its lease. If the lease is lost
 * the publisher's signal aborts and whatever it reports is discarded.
 */
export async function publishBatch(args: {
  store: RelayStore;
  publisher: Publisher;
  token: string;
  messages: readonly OutboxMessage[];
  options: ResolvedOutboxOptions;
  shutdown: AbortSignal;
}): Promise<PublishResult> {
  const { options, token } = args;
  const abort = new AbortController();
  let lostReason: string | undefined;
  const onShutdown = () => {
    lostReason ??= 'shutdown timeout passed: outcome discarded, claim left to lease recovery';
    abort.abort(args.shutdown.reason);
  };
  args.shutdown.addEventListener('abort', onShutdown);
  const heartbeat = new Heartbeat(
    () => args.store.renew(token, options.lease.duration),
    { intervalMs: options.lease.heartbeatInterval, tolerance: options.lease.heartbeatFailureTolerance },
    (reason) => {
      lostReason ??= reason;
      abort.abort(new FerryError('FERRY_LEASE_LOST', reason));
    },
  );
  heartbeat.start();
  let outcomes: readonly PublishOutcome[] = [];
  let fallbackError = 'publisher reported no outcome';
  // Once the signal aborts (lease lost, shutdown timeout) the relay stops waiting for a
  // publisher that ignores it; its late outcome is discarded either way.
  const aborted = new Promise<readonly PublishOutcome[]>((resolve) =>
    abort.signal.addEventListener('abort', () => resolve([]), { once: true }),
  );
  try {
    outcomes = await Promise.race([args.publisher.publish(args.messages, abort.signal), aborted]);
  } catch (error) {
    fallbackError = `publish failed: ${describe(error)}`.slice(0, 4_000);
  } finally {
    await heartbeat.stop();
    args.shutdown.removeEventListener('abort', onShutdown);
  }
  if (lostReason !== undefined) return { kind: 'lost', reason: lostReason };
  return { kind: 'done', completions: toCompletions(args.messages, outcomes, fallbackError, options.retry) };
}
