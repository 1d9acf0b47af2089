import { FerryError, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import {
  AttachAttempts,
  TRANSPORT_REJECT_REASONS,
  acceptHolding,
  awaitReady,
  backoffDelay,
  checkAttachable,
  checkAttached,
  clearableAny,
  consumerEmitter,
  describeCause,
  inRootContext,
  invalidResultReason,
  extractIdentity,
  messageIdFault,
  nonEmptyValue,
  nestedBodyFault,
  oversizeBodyFault,
  parseJsonObjectBytes,
  putStorableHeader,
  readFerryHeaders,
  resolveTenant,
  retriesExhaustedDetail,
  TRANSPORT_RETRIES,
  type ConsumerEmit,
  type ReadyOptions,
} from '@ferry/core/transport';
import { realDelay } from './realTimers';
import type { Unacked } from './inMemoryBroker';
import { MEMORY_SYSTEM } from './memorySystem';
import {
  resolveInMemoryConsumerOptions,
  type InMemoryConsumerOptions,
  type ResolvedInMemoryConsumerOptions,
} from './inMemoryConsumerOptions';

export interface InMemoryConsumer {
  /**
   * Resolves once the consumer consumes its queue (at once when the queue exists: there is
   * nothing to connect to); rejects at once with FERRY_PERMANENT_FAILURE (`details.queue`) while
   * the queue does not exist, as SQS's ready() does (the consumer keeps looking for it), and with
   * FERRY_CLOSED once closed. The start-up gate: once the consumer consumed, it resolves
   * whatever becomes of the queue.
   */
  ready(options?: ReadyOptions): Promise<void>;
  /**
   * The readiness probe, as every ferry consumer's: resolves while the consumer consumes its
   * queue; rejects at once with ConsumerDisconnectedError (FERRY_TRANSPORT_ERROR) naming the
   * consumer, its queue and why while it does not (the queue not declared yet, or deleted under
   * it until it is back), FERRY_CLOSED once closed.
   */
  check(): Promise<void>;
  /** Stops taking deliveries and waits for the batch in flight. Safe twice; concurrent calls share one promise. */
  close(): Promise<void>;
}

/** How long an idle consumer waits for a delivery before it looks again. */
const IDLE_WAIT_MS = 100;

/**
 * Feeds an in-memory queue into an inbox with the contract of ferry's transports. It consumes the
 * queue once it exists (`connected`); while it does not (not declared yet, or deleted under the
 * consumer), each look is a `disconnected` event with the wait before the next
 * (`reconnectBackoff`), as SQS's consumer does, and ready() rejects with FERRY_PERMANENT_FAILURE
 * until the consumer consumed once. Acceptance is the same as theirs (acceptHolding of
 * @ferry/core/transport): a delivery is acked only after `acceptMany` answered for it; invalid deliveries (no identity, a body that is not a JSON
 * object, too large, rejected by the inbox, or one whose acceptance alone fails while its
 * neighbours' succeeds) are dead-lettered with their reason; while acceptance fails batch-wide
 * (database unavailable, closed) or the admission limit refuses deliveries, those are held and
 * offered again after the backoff (`acceptance-unavailable`, then `acceptance-recovered`),
 * spending no attempt; after any other failure of the whole batch each delivery goes round a
 * transport retry of its own, as on RabbitMQ's retry tiers: off the queue for the backoff of its
 * transport attempts, then back at the tail (broker.retryLater), while the deliveries behind it go
 * on (`acceptance-failed`); one whose `maxTransportRetries` are spent is dead-lettered
 * (`transport_retries_exhausted`).
 */
export function attachInMemoryConsumer(
  acceptor: InboxAcceptor,
  given: InMemoryConsumerOptions,
): InMemoryConsumer {
  const options = checkAttachable(acceptor, given, 'broker, queue and consumer', () =>
    resolveInMemoryConsumerOptions(given),
  );
  const { broker, queue } = options;
  const stop = new AbortController();
  const emit = consumerEmitter('memory', queue, options.observer, options.logger);
  const attempts = new AttachAttempts();
  const what = `in-memory consumer ${options.consumer} of queue ${queue}`;
  let markReady: () => void = () => undefined;
  const attachedOnce = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let consuming = false;
  /** The broker's restarts when the consumer last (re)started consuming: a change is a lost session. */
  let session = broker.restarts;
  /**
   * The hold of the batch in flight (offer), aborted when the session is lost under it; undefined
   * between batches. The consumer takes one batch at a time: it consumes again once that one ended.
   */
  let inFlight: AbortController | undefined;
  /**
   * Consumes the queue if it exists (ready() resolves, `connected`); false when it does not, or
   * while a batch of a lost session is still in flight (the loop consumes again after it).
   */
  const attach = (): boolean => {
    if (consuming) return true;
    if (stop.signal.aborted || inFlight !== undefined || !broker.hasQueue(queue)) return false;
    consuming = true;
    session = broker.restarts;
    attempts.attached();
    markReady();
    emit({ type: 'connected' });
    return true;
  };
  // Told at once, whatever the loop is doing (a batch still in acceptance): as a RabbitMQ consumer
  // hears of its channel's close.
  const stopWatching = broker.onSessionLost(queue, () => {
    if (consuming) sessionLost(broker.restarts !== session ? 'restarted' : 'deleted');
  });
  // In the root context: the loop, and every batch it offers, runs outside any span of the caller.
  const loop = inRootContext(async () => {
    for (let missing = 0; !stop.signal.aborted;) {
      if (!attach()) {
        missing += 1;
        await missingQueue(missing);
        continue;
      }
      missing = 0;
      const taken = broker.take(queue, options.maxBatchSize);
      if (taken.length === 0) {
        await broker.waitForWork(queue, IDLE_WAIT_MS, stop.signal);
        continue;
      }
      emit({ type: 'received', count: taken.length });
      inFlight = new AbortController();
      // Not AbortSignal.any: Node 20 kept every batch's signal in the consumer's closing one
      // (review 156, as review 99 in the transports); clearableAny lets go of it when the batch ends.
      const batch = clearableAny([stop.signal, inFlight.signal]);
      try {
        await offer(acceptor, options, taken, emit, batch.signal);
      } finally {
        batch.clear();
        inFlight = undefined;
      }
    }
  });
  /**
   * The session the consumer consumed in ended (broker.onSessionLost): broker.restart(), as a
   * broker restart drops a RabbitMQ consumer's connection (its unacked deliveries went back to the
   * queue, its late acks are ignored), or its queue deleted, as RabbitMQ's broker cancels a
   * consumer. `disconnected` at once, check() rejects, and a batch held through an outage is
   * released (as RabbitMQ releases a hold whose channel closed: its deliveries are the broker's
   * again); the loop's next look, once the batch in flight ended, consumes again (`connected`),
   * or finds the queue missing.
   */
  function sessionLost(why: 'restarted' | 'deleted'): void {
    const error = new FerryError(
      'FERRY_TRANSPORT_ERROR',
      why === 'restarted'
        ? `in-memory broker restarted: the session of ${what} ended; its unacked deliveries went back to the queue`
        : `in-memory queue ${queue} was deleted under ${what}`,
      { details: { queue } },
    );
    consuming = false;
    attempts.lost(error);
    inFlight?.abort(error);
    options.logger?.warn({ queue }, `ferry.memory: ${describeCause(error)}`);
    emit({ type: 'disconnected', error: describeCause(error), retryInMs: 0 });
  }
  /** The queue does not exist: a failed attempt to attach (`disconnected`), tried again after the backoff. */
  async function missingQueue(attempt: number): Promise<void> {
    const error = new FerryError(
      'FERRY_PERMANENT_FAILURE',
      `in-memory queue ${queue} does not exist (declare it with broker.declareQueue)`,
      { details: { queue } },
    );
    attempts.refused(error);
    const delayMs = Math.max(1, backoffDelay(attempt, options.reconnectBackoff, options.random));
    options.logger?.warn(
      { queue, attempt, delayMs },
      `ferry.memory: queue ${queue} does not exist; looking again in ${delayMs} ms`,
    );
    emit({ type: 'disconnected', error: describeCause(error), retryInMs: delayMs });
    await realDelay(delayMs, stop.signal);
  }
  let closing: Promise<void> | undefined;
  return {
    ready(ready) {
      // The queue may have been declared since the last look: no need to wait out the backoff.
      attach();
      return awaitReady('in-memory consumer', attachedOnce, stop.signal, ready, attempts);
    },
    check() {
      // As ready(): a queue declared since the last look is consumed now.
      attach();
      return checkAttached(what, stop.signal, attempts);
    },
    close() {
      closing ??= (async () => {
        stop.abort();
        stopWatching();
        await loop;
        emit.closed();
      })();
      return closing;
    },
  };
}

/**
 * One batch: dead-letters the undecodable, offers the rest (held through an outage or the
 * admission limit until `signal` aborts), settles each answer. The deliveries of an offer that
 * failed otherwise go round the transport retry, each on its own backoff (`acceptance-failed`).
 */
async function offer(
  acceptor: InboxAcceptor,
  options: ResolvedInMemoryConsumerOptions,
  taken: readonly Unacked[],
  emit: ConsumerEmit,
  signal: AbortSignal,
): Promise<void> {
  const { broker } = options;
  // The broker session the deliveries were taken in: once restart() ended it, the broker ignores
  // their settlements (they are queued again), and they are not reported settled.
  const session = broker.restarts;
  let settled = 0;
  let accepted = 0;
  const deadLetter = (item: Unacked, messageId: string | null, reason: string, detail: string) => {
    // Of an ended session (broker.restart()) the broker ignores it: the delivery is queued again.
    if (broker.restarts !== session) return;
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
  // Reported as they happen: at the admission limit the answered deliveries are settled (and
  // reported) at once, while the refused ones of the same batch are held.
  const report = () => {
    if (accepted > 0) emit({ type: 'accepted', count: accepted });
    if (settled > 0) emit({ type: 'settled', count: settled });
    accepted = 0;
    settled = 0;
  };
  if (valid.length === 0) {
    report();
    return;
  }
  const held = await acceptHolding(
    valid.map((entry) => entry.input),
    (inputs) => acceptor.acceptMany(inputs),
    {
      backoff: options.retryBackoff,
      random: options.random,
      signal,
      transport: 'memory',
      source: options.queue,
      observer: options.observer,
      logger: options.logger,
    },
    async (answered) => {
      // One ack for the answered deliveries together, as a broker frame acks a run of them.
      const acked: Unacked[] = [];
      for (const { index, result } of answered) {
        const { item, input } = valid[index]!;
        if (result.kind === 'accepted' || result.kind === 'duplicate') {
          acked.push(item);
          accepted += 1;
        } else if (result.kind === 'conflict') {
          deadLetter(item, input.messageId, TRANSPORT_REJECT_REASONS.fingerprintConflict, result.reason);
        } else {
          deadLetter(item, input.messageId, invalidResultReason(result), result.reason);
        }
      }
      broker.ack(acked);
      if (broker.restarts === session) settled += acked.length;
      report();
    },
  );
  report();
  if (held.kind === 'settled') return;
  if (held.kind === 'released') {
    // Released by close(), or by a lost session (the broker ignores it then: queued again already):
    // back to the queue, no attempt spent, nothing to report.
    broker.nack(held.pending.map((index) => valid[index]!.item));
    return;
  }
  // Failed for the whole offer, not an outage: a transport retry each, dead-lettered once spent.
  // The rest, not offered since the window shrank, did not fail: back to the queue, nothing spent.
  broker.nack(held.notOffered.map((index) => valid[index]!.item));
  const error = describeCause(held.error);
  const delays: number[] = [];
  for (const { item, input } of held.offered.map((index) => valid[index]!)) {
    if (item.transportAttempts >= options.maxTransportRetries) {
      const detail = retriesExhaustedDetail(item.transportAttempts, error);
      deadLetter(item, input.messageId, TRANSPORT_RETRIES.exhaustedReason, detail);
      continue;
    }
    // As RabbitMQ's retry tiers: the delivery's own backoff, then back at the tail of the queue;
    // the deliveries behind it go on meanwhile.
    const delayMs = Math.max(
      1,
      backoffDelay(item.transportAttempts + 1, options.retryBackoff, options.random),
    );
    if (broker.retryLater(item, delayMs)) {
      settled += 1;
      delays.push(delayMs);
    }
  }
  if (delays.length > 0) {
    emit({ type: 'acceptance-failed', count: delays.length, error, delayMs: Math.max(...delays) });
  }
  report();
}

function decode(
  item: Unacked,
  options: ResolvedInMemoryConsumerOptions,
  maxPayloadBytes: number,
): InboxAcceptInput | { messageId: string | null; reason: string; detail: string } {
  const { delivery } = item;
  const ferry = readFerryHeaders((name) => delivery.headers[name]);
  const ownId = ferry.messageId ?? nonEmptyValue(delivery.messageId);
  // As the transports do: what the extractor does costs this delivery alone.
  const extracted =
    ownId === undefined && options.identity ? extractIdentity(options.identity, delivery) : null;
  const messageId = ownId ?? (extracted?.ok ? extracted.messageId : undefined);
  if (messageId === undefined) {
    const detail = extracted?.ok === false ? `no message id; ${extracted.detail}` : 'no message id';
    return { messageId: null, reason: TRANSPORT_REJECT_REASONS.missingIdentity, detail };
  }
  const idFault = messageIdFault(messageId);
  if (idFault !== null)
    return { messageId, reason: TRANSPORT_REJECT_REASONS.missingIdentity, detail: idFault };
  // As the transports do: the limit is the acceptor's, on the parsed payload; only a body no
  // payload within it can be written as is refused unparsed.
  const oversize = oversizeBodyFault(delivery.body, maxPayloadBytes);
  if (oversize !== null)
    return { messageId, reason: TRANSPORT_REJECT_REASONS.payloadTooLarge, detail: oversize };
  const nested = nestedBodyFault(delivery.body);
  if (nested !== null) return { messageId, reason: TRANSPORT_REJECT_REASONS.payloadTooDeep, detail: nested };
  const tenant = resolveTenant(options.tenant, delivery, ferry.tenantId);
  if (!tenant.ok) return { messageId, reason: tenant.reason, detail: tenant.detail };
  const body = parseJsonObjectBytes(delivery.body);
  if (!body.ok) return { messageId, reason: TRANSPORT_REJECT_REASONS.unparseableBody, detail: body.detail };
  return {
    consumer: options.consumer,
    messageId,
    tenantId: tenant.tenantId,
    type: ferry.eventType ?? null,
    payload: body.payload,
    headers: storableHeaders(delivery.headers),
    system: MEMORY_SYSTEM,
  };
}

/** The delivery's headers whose name and value are storable text, as every transport passes them. */
function storableHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) putStorableHeader(result, name, value);
  return result;
}
