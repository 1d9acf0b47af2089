import { FerryConfigError, FerryValidationError } from '../errors';
import { defaultLogger, type Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import { fromPrisma, type PrismaTransactionLike, type SqlExecutor } from '../sql/executor';
import { DEFAULT_ENVELOPE_LIMITS, type EnvelopeLimits, type OutboxEventInput } from './envelope/types';
import { validateEnvelope } from './envelope/validate';
import { OUTBOX_DEFAULT_CHANNEL, resolveOutboxOptions, resolveRetryOptions } from './options';
import { dbCall } from './errors';
import type { OutboxObserver } from './observer';
import { insertEvents } from './sql/insertEvents';

export interface EmitOptions {
  /** Only maxRetries matters at emit time: it is stored on each row. Default 5. */
  retry?: { maxRetries?: number };
  limits?: Partial<EnvelopeLimits>;
  /** Wake-up channel notified in the same transaction. Default 'ferry_outbox'. */
  channel?: string;
  observer?: Pick<OutboxObserver, 'emitted'>;
  logger?: Logger;
}

export interface Emitter {
  /** Inserts one event in `tx` (the application's Prisma transaction client, or a SqlExecutor). */
  emit(tx: PrismaTransactionLike | SqlExecutor, event: OutboxEventInput): Promise<{ id: string }>;
  /** Validates every event first; inserts none if any is invalid. Ids in input order. */
  emitMany(
    tx: PrismaTransactionLike | SqlExecutor,
    events: readonly OutboxEventInput[],
  ): Promise<{ ids: string[] }>;
}

function toExecutor(tx: PrismaTransactionLike | SqlExecutor): SqlExecutor {
  return typeof (tx as SqlExecutor).query === 'function'
    ? (tx as SqlExecutor)
    : fromPrisma(tx as PrismaTransactionLike);
}

function resolveLimits(limits: Partial<EnvelopeLimits> = {}): EnvelopeLimits {
  const resolved = { ...DEFAULT_ENVELOPE_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new FerryConfigError(`limits.${name}`, 'must be a positive integer');
    }
  }
  return resolved;
}

/** Resolves emit options once (throws FerryConfigError) and returns bound emit functions. */
export function createEmitter(options: EmitOptions = {}): Emitter {
  const { maxRetries } = resolveRetryOptions({ maxRetries: options.retry?.maxRetries });
  const limits = resolveLimits(options.limits);
  const channel = resolveOutboxOptions({ channel: options.channel ?? OUTBOX_DEFAULT_CHANNEL }).channel;
  let logger = options.logger;
  const emitMany: Emitter['emitMany'] = async (tx, events) => {
    if (!Array.isArray(events) || events.length === 0) {
      throw new FerryValidationError('events', 'emitMany needs a non-empty array');
    }
    const envelopes = events.map((event) => validateEnvelope(event, limits, maxRetries));
    await dbCall('emit', () => toExecutor(tx).transaction((db) => insertEvents(db, envelopes, channel)));
    const ids = envelopes.map((e) => e.id);
    if (options.observer?.emitted) {
      logger ??= defaultLogger('ferry.outbox');
      safeEmit(
        options.observer.emitted.bind(options.observer),
        { ids, types: envelopes.map((e) => e.type) },
        logger,
      );
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

/** Emits one event with default options (maxRetries 5, default limits, channel 'ferry_outbox'). */
export function emit(
  tx: PrismaTransactionLike | SqlExecutor,
  event: OutboxEventInput,
): Promise<{ id: string }> {
  return defaultEmitter.emit(tx, event);
}

/** Emits several events in one statement with default options. */
export function emitMany(
  tx: PrismaTransactionLike | SqlExecutor,
  events: readonly OutboxEventInput[],
): Promise<{ ids: string[] }> {
  return defaultEmitter.emitMany(tx, events);
}
