import type { OutboxMessage, Publisher, PublishOutcome } from '../contracts';
import { FerryError } from '../errors';
import { outboxRetryDelayMs } from '../backoff';
import { startLease } from '../lease';
import type { ResolvedOutboxOptions } from './options';
import type { Completion } from './sql/completeBatch';
import type { RelayStore } from './store';
import { startPublishSpans } from '../tracing';
import { refuseForeignRows } from './foreignRows';
import { checkOutcomes, errorText } from './publisherOutcomes';
import { describeError, redactLine } from '../redact/redact';
import { publishWaitMs } from './publishWait';

/** Longest error text the relay stores in last_error (and reports with the row). */
export const MAX_OUTBOX_ERROR_CHARS = 4_000;

/** A claimed batch on its way to the publisher. */
export interface ClaimedBatch {
  readonly token: string;
  readonly messages: OutboxMessage[];
  /** performance.now() when the claim statement was sent. */
  readonly claimedAt: number;
  /** The circuit breaker's epoch when the batch was claimed (see CircuitBreaker.record). */
  readonly circuitEpoch: number;
  /**
   * The claim was cut by a bound, `limit` rows or maxBatchBytes (ClaimResult.bytesFull): more rows
   * may be due, so the running relay claims again at once, pipelined.
   */
  readonly full: boolean;
}

export type PublishResult =
  | {
      readonly kind: 'lost';
      readonly reason: string;
      /** close() stopped waiting (shutdownTimeout passed) while the lease was still held. */
      readonly byShutdown: boolean;
    }
  | { readonly kind: 'done'; readonly completions: Completion[] };

/** What publish() threw, as text; one that cannot be read gets describeError's guarded line. */
function describe(error: unknown): string {
  try {
    return error instanceof Error ? errorText(error) : String(error);
  } catch {
    return describeError(error);
  }
}

/**
 * Turns the publisher's answer into completions. It is checked (checkOutcomes): a message
 * without a valid outcome is retryable, with what the publisher did wrong as its error. Every
 * error is redacted and bounded here, before it is stored, observed, logged or traced.
 */
export function toCompletions(
  messages: readonly OutboxMessage[],
  answer: unknown,
  fallbackError: string,
  options: Pick<ResolvedOutboxOptions, 'retry' | 'redact'>,
  /** Outcomes ferry decided itself (rows it refused); they take precedence. */
  decided: readonly PublishOutcome[] = [],
): Completion[] {
  const { byId, problem } = checkOutcomes(answer);
  const own = new Map(decided.map((outcome) => [outcome.id, outcome]));
  const redacted = new Map<string, string>();
  const stored = (text: string): string => {
    let line = redacted.get(text);
    if (line === undefined) {
      line = redactLine(text, MAX_OUTBOX_ERROR_CHARS, options.redact);
      redacted.set(text, line);
    }
    return line;
  };
  return messages.map((message) => {
    const delayMs = outboxRetryDelayMs(options.retry, message.attempt);
    const outcome = own.get(message.id) ?? byId.get(message.id);
    if (outcome?.status === 'sent') return { id: message.id, kind: 'sent', error: null, delayMs };
    if (outcome?.status === 'invalid')
      return { id: message.id, kind: 'retryable', error: stored(outcome.error), delayMs };
    if (outcome) return { id: message.id, kind: outcome.status, error: stored(outcome.error), delayMs };
    return { id: message.id, kind: 'retryable', error: stored(errorText(problem ?? fallbackError)), delayMs };
  });
}

/**
 * Publishes one claimed batch while the lease kit renews its lease. When the lease is lost
 * (a renewal found it gone, failed heartbeatFailureTolerance times, or could not prove it
 * alive for duration - heartbeatInterval since the claim was sent) or shutdownTimeout
 * passes, the publisher's signal aborts, the relay stops waiting for it and whatever it
 * reports later is discarded.
 */
export async function publishBatch(args: {
  store: RelayStore;
  publisher: Publisher;
  token: string;
  messages: readonly OutboxMessage[];
  options: ResolvedOutboxOptions;
  shutdown: AbortSignal;
  /** performance.now() when the claim statement was sent. */
  claimedAt: number;
  /** A lease renewal failed or missed its deadline (the lease kit goes on until tolerance or expiry). */
  onRenewError?: (error: unknown) => void;
}): Promise<PublishResult> {
  const { options, token } = args;
  const ids = args.messages.map((m) => m.id);
  // Before the lease starts: nothing between its start and the try that stops it may throw (a
  // lease never stopped renews the rows for ever). Rows emit() would not write are FAILED alone;
  // the publisher never sees them. One PRODUCER span per message; the publisher sends each
  // span's traceparent (reading the publisher's naming totally: it never fails a publish).
  const { publishable, refused } = refuseForeignRows(args.messages);
  const spans = startPublishSpans(publishable, args.publisher);
  const abort = new AbortController();
  let lostReason: string | undefined;
  let byShutdown = false;
  const onShutdown = () => {
    if (lostReason === undefined) {
      lostReason = 'shutdown timeout passed: outcome discarded, claim given up until its lease ends';
      byShutdown = true;
    }
    abort.abort(args.shutdown.reason);
  };
  args.shutdown.addEventListener('abort', onShutdown);
  const timing = { leaseMs: options.lease.duration, heartbeatIntervalMs: options.lease.heartbeatInterval };
  const lease = startLease({
    durationMs: options.lease.duration,
    intervalMs: options.lease.heartbeatInterval,
    tolerance: options.lease.heartbeatFailureTolerance,
    claimedAt: args.claimedAt,
    // Ends with its deadline in the kit: its lock wait bounded, its statement given up on `signal`.
    renew: async (signal) => (await args.store.renew(token, timing, ids, signal)) > 0,
    onError: args.onRenewError,
    onLost: (loss) => {
      lostReason ??= loss.message;
      abort.abort(lease.signal.reason);
    },
  });
  let answer: unknown = [];
  let fallbackError = 'publisher reported no outcome';
  const aborted = new Promise<readonly PublishOutcome[]>((resolve) =>
    abort.signal.addEventListener('abort', () => resolve([]), { once: true }),
  );
  // The relay's own deadline, if it has one (publishWait.ts): past the application's
  // publishTimeout, or the publisher's own longest answer and a margin, the batch is retryable (a
  // retry spent, so FAILED in the end), whatever the publisher reports later discarded. Without
  // one, the publish holds its claim, renewed, until it answers, its lease is lost, or close().
  const waitMs = publishWaitMs(args.publisher, options.publishTimeout, options.lease.duration);
  const unanswered =
    waitMs === null
      ? undefined
      : setTimeout(() => {
          fallbackError =
            waitMs === options.publishTimeout
              ? `publisher did not answer within publishTimeout (${waitMs} ms)`
              : waitMs === options.lease.duration
                ? `publisher did not answer within lease.duration (${waitMs} ms)`
                : `publisher did not answer within its answerWithinMs and a margin (${waitMs} ms)`;
          abort.abort(new FerryError('FERRY_TIMEOUT', fallbackError));
        }, waitMs);
  unanswered?.unref?.();
  try {
    // Never published once its lease is over (the claim's answer arrived late): another relay
    // may have recovered and published its rows, and their keys' next events, meanwhile.
    if (lease.check() && !abort.signal.aborted && publishable.length > 0)
      answer = await Promise.race([args.publisher.publish(spans.messages, abort.signal), aborted]);
  } catch (error) {
    fallbackError = `publish failed: ${describe(error)}`;
  } finally {
    clearTimeout(unanswered);
    await lease.stop();
    args.shutdown.removeEventListener('abort', onShutdown);
  }
  const completions = toCompletions(args.messages, answer, fallbackError, options, refused);
  // The loss names the renewal's error, which may quote the database's connection.
  const lost =
    lostReason === undefined ? undefined : redactLine(lostReason, MAX_OUTBOX_ERROR_CHARS, options.redact);
  spans.end(
    completions.map((c): PublishOutcome =>
      c.kind === 'sent' ? { id: c.id, status: 'sent' } : { id: c.id, status: c.kind, error: c.error ?? '' },
    ),
    () => redactLine(fallbackError, MAX_OUTBOX_ERROR_CHARS, options.redact),
    lost,
  );
  if (lost !== undefined) return { kind: 'lost', reason: lost, byShutdown };
  return {
    kind: 'done',
    completions,
  };
}
