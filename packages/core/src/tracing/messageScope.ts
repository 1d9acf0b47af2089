import { AsyncLocalStorage } from 'node:async_hooks';
import { FERRY_HEADERS } from '../contracts';
import type { OutboxEventInput } from '../outbox/envelope/types';
import { identifierFault, textFault } from '../validate/text';
import { formatTraceparent, incomingTrace, parseTraceparent, validTracestate } from './w3c';

/**
 * The message an inbox handler is processing, as events emitted while it runs inherit it.
 * Kept in an AsyncLocalStorage that the inbox worker enters around the handler's transaction,
 * so it reaches every emit in the handler's async flow whichever transaction it is given.
 */
export interface MessageScope {
  /** The incoming message id: the causation id of what the handler emits. */
  readonly messageId: string;
  /** The incoming correlation id, or the incoming message id when it carried none. */
  readonly correlationId: string;
  readonly traceparent: string | null;
  readonly tracestate: string | null;
}

const storage = new AsyncLocalStorage<MessageScope>();

/** The scope of an incoming message from its id and stored headers. */
export function messageScopeOf(messageId: string, headers: Readonly<Record<string, string>>): MessageScope {
  const correlation = headers[FERRY_HEADERS.correlationId];
  const { traceparent, tracestate } = incomingTrace(headers);
  const parsed = parseTraceparent(traceparent);
  const traced = parsed !== null;
  return {
    messageId,
    correlationId: typeof correlation === 'string' && correlation.length > 0 ? correlation : messageId,
    // As ferry writes it (version 00): a newer version's extra fields are not emit's shape.
    traceparent: traced ? formatTraceparent(parsed) : null,
    tracestate: traced && typeof tracestate === 'string' && tracestate.length > 0 ? tracestate : null,
  };
}

/** Runs `fn` with `scope` as the message being handled. */
export function runInMessageScope<T>(scope: MessageScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The message being handled in this async flow, if any. */
export function currentMessageScope(): MessageScope | undefined {
  return storage.getStore();
}

/** U+FFFE and U+FFFF: valid text to PostgreSQL, refused by SQS's message attributes. */
const NONCHARACTER = /[\uFFFE\uFFFF]/;

/**
 * Whether an id read from a delivery may go on the handler's events: what emit takes as an id
 * (at most `maxLength`, valid text) and an identifier any broker carries as a header (no control
 * character, line break, bidirectional control or U+FFFE/U+FFFF). A hostile delivery's header made
 * the handler's events FAILED on SQS, or forged log lines downstream (review 37).
 */
function fits(value: string | null, maxLength: number): value is string {
  return (
    value !== null &&
    value.length > 0 &&
    value.length <= maxLength &&
    textFault(value) === null &&
    identifierFault(value) === null &&
    !NONCHARACTER.test(value)
  );
}

/**
 * `event` with what it leaves undefined taken from the handled message: correlation id,
 * causation id (the incoming message id) and trace context (`trace`: the emit span's, else the
 * incoming one). An explicit value, null included, wins. A value that would not pass emit's
 * validation (longer than `maxIdLength`, invalid text), or that a broker may refuse as a header
 * (fits; a tracestate that is not W3C's, validTracestate), is not inherited, so a hostile
 * incoming header can never make a handler's emit, or its relay, fail.
 */
export function inheritScope(
  event: OutboxEventInput,
  scope: MessageScope | undefined,
  trace: { readonly traceparent: string; readonly tracestate: string | null } | null,
  maxIdLength: number,
): OutboxEventInput {
  if (event === null || typeof event !== 'object') return event;
  const inherited: { -readonly [K in keyof OutboxEventInput]?: OutboxEventInput[K] } = {};
  if (scope !== undefined) {
    if (event.correlationId === undefined && fits(scope.correlationId, maxIdLength))
      inherited.correlationId = scope.correlationId;
    if (event.causationId === undefined && fits(scope.messageId, maxIdLength))
      inherited.causationId = scope.messageId;
  }
  const context =
    trace ?? (scope?.traceparent ? { traceparent: scope.traceparent, tracestate: scope.tracestate } : null);
  if (event.traceparent === undefined && context !== null) {
    inherited.traceparent = context.traceparent;
    const tracestate = validTracestate(context.tracestate);
    if (event.tracestate === undefined && tracestate !== null) inherited.tracestate = tracestate;
  }
  return Object.keys(inherited).length === 0 ? event : { ...event, ...inherited };
}
