import {
  InboxAdmissionRejectedError,
  type InboxAcceptInput,
  type InboxAcceptor,
  type InboxAdmissionResult,
} from '@ferry/core';
import {
  TRANSPORT_REJECT_REASONS,
  abortableDelay,
  awaitReady,
  backoffDelay,
  checkAttachable,
  consumerEmitter,
  describeCause,
  nonEmptyValue,
  parseJsonObjectBody,
  readFerryHeaders,
  resolveTenant,
  type ConsumerEmit,
  type ReadyOptions,
} from '@ferry/core/transport';
import type { Unacked } from './inMemoryBroker';
import {
  resolveInMemoryConsumerOptions,
  type InMemoryConsumerOptions,
  type ResolvedInMemoryConsumerOptions,
} from './inMemoryConsumerOptions';

export interface InMemoryConsumer {
  /** Resolves once the consumer consumes (at once: there is nothing to connect to); FERRY_CLOSED once closed. */
  ready(options?: ReadyOptions): Promise<void>;
  /** Stops taking deliveries and waits for the batch in flight. Safe twice; concurrent calls share one promise. */
  close(): Promise<void>;
}

/** How long an idle consumer waits for a delivery before it looks again. */
const IDLE_WAIT_MS = 100;

/**
 * Feeds an in-memory queue into an inbox with the contract of ferry's transports: a delivery is
 * acked only after `acceptMany` answered for it; invalid deliveries (no identity, a body that
 * is not a JSON object, too large, or rejected by the inbox) are dead-lettered with their
 * reason; when acceptance as a whole fails, the batch goes back to the head of the queue and is
 * taken again after a backoff (`acceptance-failed`). At the inbox's admission limit the answered
 * deliveries are settled and only the refused ones go back, after the same backoff, reported as
 * back-pressure (`acceptance-unavailable`), never dead-lettered for it.
 */
export function attachInMemoryConsumer(
  acceptor: InboxAcceptor,
  given: InMemoryConsumerOptions,
): InMemoryConsumer {
  checkAttachable(acceptor, given.consumer);
  const options = resolveInMemoryConsumerOptions(given);
  const stop = new AbortController();
  const emit = consumerEmitter('memory', options.queue, options.observer, options.logger);
  emit({ type: 'connected' });
  const loop = (async () => {
    // failures: consecutive failed offers; refusals: those of them the admission limit refused.
    for (let failures = 0, refusals = 0; !stop.signal.aborted;) {
      const taken = options.broker.take(options.queue, options.maxBatchSize);
      if (taken.length === 0) {
        await options.broker.waitForWork(options.queue, IDLE_WAIT_MS, stop.signal);
        continue;
      }
      emit({ type: 'received', count: taken.length });
      const failure = await offer(acceptor, options, taken, emit);
      failures = failure === null ? 0 : failures + 1;
      if (failure === null) {
        // The admission limit lets the refused deliveries in again: the hold is over.
        if (refusals > 0) emit({ type: 'acceptance-recovered', count: taken.length, failures: refusals });
        refusals = 0;
        continue;
      }
      if (failure.refused) refusals += 1;
      const delayMs = backoffDelay(failures, options.retryBackoff, options.random);
      const { count, error } = failure;
      // Refused at the admission limit: back-pressure, reported like an outage, not a failure.
      if (failure.refused) emit({ type: 'acceptance-unavailable', count, attempt: failures, delayMs, error });
      else emit({ type: 'acceptance-failed', count, error, delayMs });
      await abortableDelay(delayMs, stop.signal).catch(() => undefined);
    }
  })();
  let closing: Promise<void> | undefined;
  return {
    ready: (ready) => awaitReady('in-memory consumer', Promise.resolve(), stop.signal, ready),
    close() {
      closing ??= (async () => {
        stop.abort();
        await loop;
        emit.closed();
      })();
      return closing;
    },
  };
}

/**
 * One batch: dead-letters the invalid, offers the rest, and reports what became of them; null,
 * or the nacked deliveries' count and the cause when acceptance as a whole failed.
 */
async function offer(
  acceptor: InboxAcceptor,
  options: ResolvedInMemoryConsumerOptions,
  taken: readonly Unacked[],
  emit: ConsumerEmit,
): Promise<{ readonly count: number; readonly error: string; readonly refused: boolean } | null> {
  const { broker } = options;
  let settled = 0;
  const deadLetter = (item: Unacked, messageId: string | null, reason: string, detail: string) => {
    broker.deadLetter(item, reason, detail);
    settled += 1;
    emit({ type: 'dead-lettered', reason, messageId });
  };
  const valid: { item: Unacked; input: InboxAcceptInput }[] = [];
  for (const item of taken) {
    const decoded = decode(item, options, acceptor.maxPayloadBytes);
    if ('reason' in decoded) deadLetter(item, decoded.messageId, decoded.reason, decoded.detail);
    else valid.push({ item, input: decoded });
  }
  let accepted = 0;
  let failure: { count: number; error: string; refused: boolean } | null = null;
  if (valid.length > 0) {
    let results: readonly InboxAdmissionResult[];
    try {
      results = await acceptor.acceptMany(valid.map((entry) => entry.input));
    } catch (error) {
      failure = { count: valid.length, error: describeCause(error), refused: false };
      // At the admission limit the answered deliveries are settled; only the refused go back.
      const admission = error instanceof InboxAdmissionRejectedError ? error.results : [];
      if (admission.length !== valid.length) {
        broker.nack(valid.map((entry) => entry.item));
        if (settled > 0) emit({ type: 'settled', count: settled });
        return failure;
      }
      results = admission;
      const refused = valid.filter((_, index) => admission[index]!.kind === 'refused');
      broker.nack(refused.map((entry) => entry.item));
      failure = { ...failure, count: refused.length, refused: true };
    }
    valid.forEach(({ item, input }, index) => {
      const result = results[index];
      if (result?.kind === 'refused') return;
      if (result?.kind === 'accepted' || result?.kind === 'duplicate') {
        broker.ack([item]);
        accepted += 1;
        settled += 1;
      } else if (result?.kind === 'conflict') {
        deadLetter(item, input.messageId, TRANSPORT_REJECT_REASONS.fingerprintConflict, result.reason);
      } else {
        const reason = result?.rejectReason ?? TRANSPORT_REJECT_REASONS.inboxInvalid;
        deadLetter(item, input.messageId, reason, result?.reason ?? 'no result for this delivery');
      }
    });
  }
  if (accepted > 0) emit({ type: 'accepted', count: accepted });
  if (settled > 0) emit({ type: 'settled', count: settled });
  return failure;
}

/** The `system` this consumer names on every delivery (OpenTelemetry's `messaging.system`). */
const MEMORY_SYSTEM = 'memory';

function decode(
  item: Unacked,
  options: ResolvedInMemoryConsumerOptions,
  maxPayloadBytes: number,
): InboxAcceptInput | { messageId: string | null; reason: string; detail: string } {
  const { delivery } = item;
  const ferry = readFerryHeaders((name) => delivery.headers[name]);
  const messageId =
    ferry.messageId ?? nonEmptyValue(delivery.messageId) ?? nonEmptyValue(options.identity?.(delivery));
  if (messageId === undefined) {
    return { messageId: null, reason: TRANSPORT_REJECT_REASONS.missingIdentity, detail: 'no message id' };
  }
  if (delivery.body.length > maxPayloadBytes) {
    const detail = `${delivery.body.length} bytes`;
    return { messageId, reason: TRANSPORT_REJECT_REASONS.payloadTooLarge, detail };
  }
  const tenant = resolveTenant(options.tenant, delivery, ferry.tenantId);
  if (!tenant.ok) return { messageId, reason: tenant.reason, detail: tenant.detail };
  const body = parseJsonObjectBody(delivery.body.toString('utf8'));
  if (!body.ok) return { messageId, reason: TRANSPORT_REJECT_REASONS.unparseableBody, detail: body.detail };
  return {
    consumer: options.consumer,
    messageId,
    tenantId: tenant.tenantId,
    type: ferry.eventType ?? null,
    payload: body.payload,
    headers: delivery.headers,
    system: MEMORY_SYSTEM,
  };
}
