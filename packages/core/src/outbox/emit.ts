import { refuseEndedTransaction } from '../sql/endedTransactions';
import { FerryError, FerryValidationError, isFerryError } from '../errors';
import { arrayLengthArgument, integerOption, knownKeysOption, type OptionKeys } from '../optionChecks';
import { MAX_BATCH_ITEMS } from '../validate/batchLimit';
import { defaultLogger, guardLogger, loggerOption, type Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import { executorFor, type ApplicationTransaction } from '../sql/applicationTransaction';
import { statementTimeoutOption, withDeadlines } from '../sql/statementDeadline';
import {
  DEFAULT_ENVELOPE_LIMITS,
  ENVELOPE_LIMIT_BOUNDS,
  type EnvelopeLimits,
  type OutboxEventInput,
  type ValidEnvelope,
} from './envelope/types';
import { validateEnvelope } from './envelope/validate';
import { OUTBOX_DEFAULT_CHANNEL, resolveOutboxOptions, resolveRetryOptions } from './options';
import { dbCall } from './errors';
import type { OutboxObserver } from './events';
import { observerOption } from './observer';
import { insertEvents } from './sql/insertEvents';
import { currentMessageScope, describeEmitted, inheritScope, inSpan, startEmitSpan } from '../tracing';
import { withSerializationRetry } from '../sql/serializationRetry';

export interface EmitOptions {
  /** Only maxRetries matters at emit time: it is stored on each row. Default 5. */
  retry?: { maxRetries?: number };
  limits?: Partial<EnvelopeLimits>;
  /** Wake-up channel notified in the same transaction. Default 'ferry_outbox'. */
  channel?: string;
  /** Called with `inserted` after each insert, through safeEmit. */
  observer?: OutboxObserver;
  logger?: Logger;
  /**
   * Deadline of the transaction emit opens when given a root client (a Prisma client, a pg `Pool`
   * or idle client, a Kysely instance, a root SqlExecutor), as the admins' option: past it the
   * call fails with a retriable FERRY_TIMEOUT (or FERRY_DATABASE_UNAVAILABLE when no connection
   * came in time), nothing inserted, or, when its COMMIT was sent and PostgreSQL cannot say
   * afterwards whether it landed, with FERRY_OUTCOME_UNKNOWN (not retriable: the events may have
   * been inserted, and emitting them again would duplicate them; `details.ids` names them, to
   * look for before emitting again). A COMMIT whose answer was lost
   * but that PostgreSQL says landed returns the ids (asked on another connection: on an idle pg
   * client, one of its own with the client's parameters, as the client waits behind its COMMIT,
   * which node-postgres gives no deadline: end that client). Default 30,000 ms, 100 to 3,600,000. In the
   * application's open transaction the limits stay the application's.
   */
  statementTimeoutMs?: number;
}

export interface Emitter {
  /**
   * Inserts one event in `tx`, the application's open transaction (a Prisma transaction client,
   * a node-postgres client after BEGIN, a Kysely `Transaction`, a SqlExecutor), committed or
   * rolled back with it. Given a root client (Prisma client, pg `Pool` or idle client, Kysely
   * instance), it commits a transaction of its own. A pg client with statements not yet answered
   * (a `client.query('BEGIN')` not awaited) is refused (FERRY_VALIDATION_FAILED on `tx`): whether
   * it is in a transaction is known only once they are answered.
   */
  emit(tx: ApplicationTransaction, event: OutboxEventInput): Promise<{ id: string }>;
  /**
   * Validates every event first; inserts none if any is invalid. Ids in input order. At most
   * 10,000 events (as acceptMany's inputs): a longer array, or a length that is no array length,
   * is refused (FERRY_VALIDATION_FAILED on `events`) before any event is read.
   */
  emitMany(tx: ApplicationTransaction, events: readonly OutboxEventInput[]): Promise<{ ids: string[] }>;
}

/** Every emit option key; unknown keys are refused (FERRY_CONFIG_INVALID). */
const EMIT_KEYS = {
  retry: true,
  limits: true,
  channel: true,
  observer: true,
  logger: true,
  statementTimeoutMs: true,
} as const satisfies OptionKeys<EmitOptions>;

function resolveLimits(limits: Partial<EnvelopeLimits> = {}): EnvelopeLimits {
  limits = knownKeysOption('limits.', limits, Object.keys(DEFAULT_ENVELOPE_LIMITS));
  const resolved = { ...DEFAULT_ENVELOPE_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    const bound = ENVELOPE_LIMIT_BOUNDS[name as keyof EnvelopeLimits];
    integerOption(`limits.${name}`, value, 1, bound);
  }
  return resolved;
}

/**
 * FERRY_OUTCOME_UNKNOWN (emit's own COMMIT answer lost, PostgreSQL not telling) with the events'
 * ids in `details.ids`, so the caller can look for them before emitting again; others as they are.
 */
function withEventIds(error: unknown, ids: readonly string[]): unknown {
  if (!isFerryError(error, 'FERRY_OUTCOME_UNKNOWN')) return error;
  return new FerryError('FERRY_OUTCOME_UNKNOWN', `${error.message} (the events: details.ids)`, {
    cause: error.cause,
    details: { ...error.details, ids: [...ids] },
  });
}

/**
 * Every index of `events`, a hole too (as undefined, refused as any event that is not an object):
 * `events.map` skips a hole, which then reached the insert as a NULL id and aborted the
 * application's transaction. The copy stops at the first element that is not an object, which
 * validation refuses (the events before it are validated first, as before): copied hole by hole,
 * an array of length 2^32-1 holding one event exhausted the heap before its first hole was refused
 * (review87-sparseEventsLength). An array whose elements cannot be read (a Proxy) is refused, and
 * so, before any element is read, is one of more than MAX_BATCH_ITEMS (10,000) events or whose
 * length is no array length (arrayLengthArgument, its length read once, as acceptMany's inputs):
 * a Proxy of length 1e9 answering an event at every index was copied and validated event by event,
 * and a length of 1.5 or '1' was answered with the events below it (review88-emitManyLength).
 */
function everyEvent(events: readonly OutboxEventInput[]): OutboxEventInput[] {
  const length = arrayLengthArgument('events', events, MAX_BATCH_ITEMS, 'events');
  try {
    const copy: OutboxEventInput[] = [];
    for (let i = 0; i < length; i += 1) {
      const event = events[i] as unknown;
      copy.push(event as OutboxEventInput);
      if (event === null || typeof event !== 'object') break;
    }
    return copy;
  } catch (error) {
    const detail = error instanceof Error ? error.message : typeof error;
    throw new FerryValidationError('events', `could not be read: ${detail}`.slice(0, 300));
  }
}

/** Resolves emit options once (throws FerryConfigError) and returns bound emit functions. */
export function createEmitter(options: EmitOptions = {}): Emitter {
  options = knownKeysOption('', options, EMIT_KEYS);
  const retry = knownKeysOption('retry.', options.retry, ['maxRetries']);
  const { maxRetries } = resolveRetryOptions({ maxRetries: retry?.maxRetries });
  const limits = resolveLimits(options.limits);
  const observer = observerOption(options.observer);
  const channel = resolveOutboxOptions({ channel: options.channel ?? OUTBOX_DEFAULT_CHANNEL }).channel;
  const statementTimeoutMs = statementTimeoutOption('statementTimeoutMs', options.statementTimeoutMs);
  const given = loggerOption('logger', options.logger);
  let logger = given === undefined ? undefined : guardLogger(given);
  const emitMany: Emitter['emitMany'] = async (tx, given) => {
    const events = Array.isArray(given) ? everyEvent(given) : [];
    if (events.length === 0) throw new FerryValidationError('events', 'emitMany needs a non-empty array');
    refuseEndedTransaction(tx);
    // A root client's own transaction gets the deadline; the application's stays as it is.
    const executor = withSerializationRetry(
      withDeadlines(executorFor(tx), statementTimeoutMs),
      statementTimeoutMs,
    );
    // Inside an inbox handler, events inherit the handled message's correlation, causation
    // and trace context (tracing/messageScope); the emit span's context, if any, comes first.
    const scope = currentMessageScope();
    const span = startEmitSpan(events.length, scope);
    let envelopes: ValidEnvelope[];
    try {
      const trace = span.traceContext();
      const inherit = (fields: OutboxEventInput) => inheritScope(fields, scope, trace, limits.maxIdLength);
      envelopes = events.map((event) => validateEnvelope(event, limits, maxRetries, inherit));
    } catch (error) {
      span.end(error);
      throw error;
    }
    describeEmitted(
      span,
      envelopes.map((e) => e.id),
      envelopes.map((e) => e.type),
    );
    const ids = envelopes.map((e) => e.id);
    let ownTransaction = false;
    await inSpan(span, () =>
      dbCall(
        'emit',
        () =>
          executor.transaction((db) => {
            // A new executor means emitMany opened (and, on return, committed) its own transaction.
            ownTransaction = db !== executor;
            return insertEvents(db, envelopes, channel);
          }),
        undefined,
        logger,
      ).catch((error: unknown) => {
        throw withEventIds(error, ids);
      }),
    );
    if (observer) {
      logger ??= defaultLogger('ferry.outbox');
      const types = envelopes.map((e) => e.type);
      // A copy of ids: what the observer does with its event never changes what emitMany returns.
      safeEmit(observer, { type: 'inserted', ids: [...ids], types, committed: ownTransaction }, logger);
    }
    return { ids };
  };
  return {
    emitMany,
    async emit(tx, event) {
      const { ids } = await emitMany(tx, [event]);
      return { id: ids[0] as string };
    },
  };
}

const defaultEmitter = createEmitter();

/**
 * Emits one event with default options (maxRetries 5, default limits, channel 'ferry_outbox',
 * statementTimeoutMs 30,000 on a root client).
 */
export function emit(tx: ApplicationTransaction, event: OutboxEventInput): Promise<{ id: string }> {
  return defaultEmitter.emit(tx, event);
}

/** Emits several events in one statement with default options. */
export function emitMany(
  tx: ApplicationTransaction,
  events: readonly OutboxEventInput[],
): Promise<{ ids: string[] }> {
  return defaultEmitter.emitMany(tx, events);
}
