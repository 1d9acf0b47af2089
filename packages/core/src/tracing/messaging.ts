import type { Attributes } from '@opentelemetry/api';
import type { InboxAcceptInput, OutboxMessage, PublishOutcome, Publisher } from '../contracts';
import { firstValuesByName } from '../observe/cardinality';
import { FERRY_HEADERS } from '../contracts';
import { ENVELOPE_LIMIT_BOUNDS } from '../outbox/envelope/types';
import type { Redactor } from '../redact/redact';
import { stripUrlCredentials } from '../redact/urlCredentials';
import { IDENTIFIER_LIMITS } from '../validate/identifierLimits';
import { endSpan, recordsNoSpans, startSpan, type FerrySpan } from './span';
import { incomingTrace } from './w3c';

/**
 * ferry's spans and their attributes, after OpenTelemetry's messaging semantic conventions
 * (messaging.operation.type create / send / receive / process). Every function is a no-op
 * when @opentelemetry/api is not installed.
 */
export const MESSAGING_ATTRIBUTES = {
  system: 'messaging.system',
  destination: 'messaging.destination.name',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  messageId: 'messaging.message.id',
  conversationId: 'messaging.message.conversation_id',
  batchCount: 'messaging.batch.message_count',
  consumerGroup: 'messaging.consumer.group.name',
  eventType: 'ferry.event.type',
  attempt: 'ferry.attempt',
  receiptId: 'ferry.inbox.receipt_id',
  outcome: 'ferry.outcome',
  reconciled: 'ferry.reconciled',
} as const;

const A = MESSAGING_ATTRIBUTES;

/**
 * The longest value a span takes from a message for each attribute: the bound emit or acceptance
 * holds that field to (the widest an emitter may be configured with), so a delivery's header or
 * field no ferry producer could have written (a correlation header of 15 KB) is no attribute.
 */
const FIELD_BOUNDS = {
  system: IDENTIFIER_LIMITS.system,
  consumer: IDENTIFIER_LIMITS.consumer,
  messageId: IDENTIFIER_LIMITS.messageId,
  eventType: IDENTIFIER_LIMITS.eventType,
  correlationId: ENVELOPE_LIMIT_BOUNDS.maxIdLength,
  destination: ENVELOPE_LIMIT_BOUNDS.maxIdLength,
} as const;

/** `value` when it is a string within `field`'s bound (FIELD_BOUNDS), else undefined: left out. */
function bounded(field: keyof typeof FIELD_BOUNDS, value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= FIELD_BOUNDS[field] ? value : undefined;
}

function defined(attributes: Record<string, string | number | null | undefined>): Attributes {
  const result: Attributes = {};
  for (const [key, value] of Object.entries(attributes))
    if (value !== null && value !== undefined) result[key] = value;
  return result;
}

/**
 * The span of one emit / emitMany call (INTERNAL), child of the active span; inside an inbox
 * handler with no span active (no context manager carried the handler's span here), child of the
 * handled message's trace context (`scope`), so the handler's events stay in its trace.
 */
export function startEmitSpan(
  count: number,
  scope?: { readonly traceparent: string | null; readonly tracestate: string | null },
): FerrySpan {
  return startSpan({
    name: 'ferry emit',
    kind: 'internal',
    ...(scope ? { parent: { traceparent: scope.traceparent, tracestate: scope.tracestate } } : {}),
    activeFirst: true,
    fallback: 'active',
    attributes: defined({ [A.operationType]: 'create', [A.operationName]: 'emit', [A.batchCount]: count }),
  });
}

/** Names what the emit span created, once the events are validated. */
export function describeEmitted(span: FerrySpan, ids: readonly string[], types: readonly string[]): void {
  span.setAttributes(
    ids.length === 1 ? { [A.messageId]: ids[0] as string, [A.eventType]: types[0] as string } : {},
  );
}

export interface PublishSpans {
  /** The messages to hand to the publisher: traceparent replaced by each PRODUCER span's. */
  readonly messages: readonly OutboxMessage[];
  /**
   * Ends every span with its message's outcome (`fallbackError()` for a message without one:
   * called only then, so that a batch all sent redacts nothing); `lostReason` (the lease was
   * lost, the outcome is discarded) ends them all in error.
   */
  end(outcomes: readonly PublishOutcome[], fallbackError: () => string, lostReason?: string): void;
}

/** The distinct targets a span name takes per operation (publish, accept, process) in a process. */
export const SPAN_NAME_TARGETS = 100;

const spanTargets = firstValuesByName(SPAN_NAME_TARGETS);

/**
 * `<operation> <target>`, low-cardinality as OpenTelemetry's messaging conventions require: the
 * first SPAN_NAME_TARGETS distinct targets of the operation (a consumer, a destination's name can
 * come from a delivery or an event), the operation alone for any later one or none.
 */
function spanName(operation: string, target: string | undefined): string {
  const kept = target === undefined ? undefined : spanTargets(operation)(target);
  return kept === undefined ? operation : `${operation} ${kept}`;
}

/**
 * What `read()` gives, read totally off a third party's object (a publisher's `system` or
 * destinationName, a delivery's field or header), so that naming a span never fails a publish or
 * an acceptance: undefined when it throws, and undefined for a thenable (an async getter or hook,
 * whose name is not known yet), whose rejection is handled here: dropped, it would be an
 * unhandled rejection, which ends the process.
 */
function peek(read: () => unknown): unknown {
  try {
    const value = read();
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return value;
    if (typeof (value as { then?: unknown }).then !== 'function') return value;
    Promise.resolve(value).catch(() => undefined);
    return undefined;
  } catch {
    return undefined;
  }
}

/**
 * A destination or consumer as a span shows it (name and attribute): within its bound, without a
 * URL's user and password (an event's destination, a publisher's name or a consumer's can be a
 * queue URL holding them; every trace backend the application exports to would get them).
 */
function shown(field: 'destination' | 'consumer', value: unknown): string | undefined {
  const text = bounded(field, value);
  return text ? stripUrlCredentials(text) : undefined;
}

/** The publisher's low-cardinality name of where `message` goes (Publisher.destinationName), if any. */
function destinationName(publisher: Partial<Publisher>, message: OutboxMessage): string | undefined {
  return shown(
    'destination',
    peek(() =>
      typeof publisher.destinationName === 'function' ? publisher.destinationName(message) : undefined,
    ),
  );
}

/**
 * One PRODUCER span per claimed message, child of the trace context stored on its row (a new
 * trace when the row has none), named after the publisher's destinationName (`publish <exchange,
 * topic or queue>`); `messaging.destination.name` is the event's own destination (the full, per
 * message one: `exchange/routing.key`), else that name. `system`: the publisher's messaging
 * system, if it names one.
 */
export function startPublishSpans(
  messages: readonly OutboxMessage[],
  publisher: Partial<Publisher>,
): PublishSpans {
  const system = peek(() => publisher.system);
  const spans = messages.map((message) => {
    const name = destinationName(publisher, message);
    return startSpan({
      name: spanName('publish', name),
      kind: 'producer',
      parent: { traceparent: message.traceparent, tracestate: message.tracestate },
      fallback: 'root',
      attributes: defined({
        [A.system]: bounded('system', system),
        [A.destination]: shown('destination', message.destination) ?? name,
        [A.operationType]: 'send',
        [A.operationName]: 'publish',
        [A.messageId]: bounded('messageId', message.id),
        [A.conversationId]: bounded('correlationId', message.correlationId),
        [A.eventType]: bounded('eventType', message.type),
        [A.attempt]: message.attempt,
      }),
    });
  });
  return {
    messages: messages.map((message, index) => {
      const context = spans[index]?.traceContext() ?? null;
      return context === null ? message : { ...message, traceparent: context.traceparent };
    }),
    end(outcomes, fallbackError, lostReason) {
      const byId = new Map(outcomes.map((o) => [o.id, o]));
      messages.forEach((message, index) => {
        const span = spans[index] as FerrySpan;
        const outcome = byId.get(message.id);
        if (lostReason !== undefined) {
          span.setAttributes({ [A.outcome]: 'lost' });
          span.end(lostReason);
          return;
        }
        span.setAttributes({ [A.outcome]: outcome?.status ?? 'retryable' });
        if (outcome?.status === 'sent') span.end();
        else span.end(outcome ? outcome.error : fallbackError());
      });
    },
  };
}

export interface AcceptSpans {
  /** Ends each input's span with its outcome kind (`accepted`, `duplicate`, …). */
  end(kinds: readonly string[]): void;
  /** Ends every span in error (acceptance as a whole failed). */
  fail(error: unknown): void;
}

const ACCEPT_ERRORS = new Set(['invalid', 'conflict', 'refused']);

const NO_ACCEPT_SPANS: AcceptSpans = { end: () => undefined, fail: () => undefined };

function header(input: InboxAcceptInput, name: string): string | null {
  const headers = peek(() => (input as { headers?: unknown } | null)?.headers);
  if (headers === null || typeof headers !== 'object') return null;
  const value = peek(() => (headers as Record<string, unknown>)[name]);
  return typeof value === 'string' ? value : null;
}

function field(input: InboxAcceptInput, name: 'consumer' | 'messageId' | 'type' | 'system'): unknown {
  return peek(() => (input as Partial<InboxAcceptInput> | null)?.[name]);
}

/**
 * One CONSUMER span per delivery offered to the inbox, child of the delivery's traceparent
 * header, a new trace when it has none (never a child of the active context: a consumer's
 * callbacks may run in the context it was attached in, and one start-up span would then parent
 * every untraced delivery of the process, review 71): every transport gets it, as acceptance is
 * core's. Reads hostile input defensively; validation is acceptance's job.
 */
export function startAcceptSpans(inputs: readonly InboxAcceptInput[]): AcceptSpans {
  const list: readonly InboxAcceptInput[] = Array.isArray(inputs) ? inputs : [];
  if (recordsNoSpans()) {
    // Nothing to record (4 us an input for spans no one sees): the span names' first targets
    // are still noted, as the spans would have been named (spanName), per distinct consumer.
    const named = new Set<unknown>();
    for (const input of list) {
      const consumer = field(input, 'consumer');
      if (named.has(consumer)) continue;
      named.add(consumer);
      spanName('accept', shown('consumer', consumer));
    }
    return NO_ACCEPT_SPANS;
  }
  const spans = list.map((input) => {
    const consumer = shown('consumer', field(input, 'consumer'));
    return startSpan({
      name: spanName('accept', consumer),
      kind: 'consumer',
      parent: incomingTrace(peek(() => (input as { headers?: unknown } | null)?.headers)),
      fallback: 'root',
      attributes: defined({
        [A.system]: bounded('system', field(input, 'system')),
        [A.operationType]: 'receive',
        [A.operationName]: 'accept',
        [A.consumerGroup]: consumer,
        [A.messageId]: bounded('messageId', field(input, 'messageId')),
        [A.conversationId]: bounded('correlationId', header(input, FERRY_HEADERS.correlationId)),
        [A.eventType]: bounded('eventType', field(input, 'type')),
      }),
    });
  });
  return {
    end(kinds) {
      spans.forEach((span, index) => {
        const kind = kinds[index] ?? 'unanswered';
        span.setAttributes({ [A.outcome]: kind });
        span.end(ACCEPT_ERRORS.has(kind) || kind === 'unanswered' ? kind : undefined);
      });
    },
    fail(error) {
      for (const span of spans) span.end(error);
    },
  };
}

/** What the handler span needs to know of a claimed receipt. */
export interface ProcessedReceipt {
  readonly id: string;
  readonly messageId: string;
  readonly consumer: string;
  readonly messageType: string | null;
  /** The messaging system that delivered it, stored on acceptance. */
  readonly system: string | null;
  readonly attempts: number;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The CONSUMER span of one handler run (operation `process`), child of the trace context the
 * receipt was accepted with; the inbox worker makes it the active context while the handler runs.
 */
export function startProcessSpan(receipt: ProcessedReceipt): FerrySpan {
  return startSpan({
    name: spanName('process', shown('consumer', receipt.consumer)),
    kind: 'consumer',
    parent: incomingTrace(receipt.headers),
    fallback: 'root',
    attributes: defined({
      [A.system]: bounded('system', receipt.system),
      [A.operationType]: 'process',
      [A.operationName]: 'process',
      [A.consumerGroup]: shown('consumer', receipt.consumer),
      [A.messageId]: bounded('messageId', receipt.messageId),
      [A.conversationId]: bounded('correlationId', receipt.headers[FERRY_HEADERS.correlationId]),
      [A.eventType]: bounded('eventType', receipt.messageType),
      [A.receiptId]: receipt.id,
      [A.attempt]: receipt.attempts,
    }),
  });
}

/**
 * Ends a process span with what became of its receipt (`ferry.outcome`: the inbox worker's
 * ProcessOutcome, as the publish and accept spans carry theirs), ERROR with `failure.error` when
 * the handler's transaction failed. A failure whose outcome is still `completed` is a transaction
 * that committed though its answer was lost (the worker read the receipt back COMPLETED): the
 * message was handled, so the span is not ERROR, and `ferry.reconciled` says so. Never throws.
 */
export function endProcessSpan(
  span: FerrySpan,
  outcome: string,
  failure: { readonly error: unknown } | undefined,
  redact?: Redactor,
): void {
  const reconciled = failure !== undefined && outcome === 'completed';
  try {
    span.setAttributes(
      reconciled ? { [A.outcome]: outcome, [A.reconciled]: true } : { [A.outcome]: outcome },
    );
  } catch {
    // An attribute never keeps the span from ending.
  }
  endSpan(span, reconciled ? undefined : failure, redact);
}
