import { checkListenUrl } from '../wake/notifyListener';
import { loggerOption, type Logger } from '../observe/logger';
import { FerryConfigError } from '../errors';
import { leaseHeartbeatInterval } from '../lease';
import { ceilingOption } from '../optionRelations';
import {
  booleanOption,
  functionOption,
  integerOption,
  isOptionsObject,
  isPlainOptions,
  knownKeysOption,
  recordOption,
  oneOfOption,
  received,
  type OptionKeys,
} from '../optionChecks';
import type { PrismaTransactionLike } from '../sql/executor';
import { STATEMENT_TIMEOUT_BOUNDS, STATEMENT_TIMEOUT_DEFAULT_MS } from '../sql/statementDeadline';
import type { RandomSource } from '../backoff';
import { redactOption, type RedactionOptions, type Redactor } from '../redact/redact';
import type { InboxHandler, InboxHandlerContextWrapper, InboxObserver } from './types';
import { consumerNameFault } from './validateInput';

/** Worker defaults and bounds; docs/inbox.md quotes this table. */
export const INBOX_WORKER_DEFAULTS = {
  enabled: false,
  concurrency: 4,
  prefetch: 16,
  pollIntervalMs: 1_000,
  leaseMs: 30_000,
  heartbeatIntervalMs: 5_000,
  transactionTimeoutMs: 10_000,
  transactionMaxWaitMs: 5_000,
  lockTimeoutMs: 1_000,
  shutdownTimeoutMs: 15_000,
  maxAttempts: 8,
  retryBaseMs: 1_000,
  retryMaxMs: 300_000,
} as const;

export const INBOX_DEFAULTS = {
  maxPayloadBytes: 262_144,
  statementTimeoutMs: STATEMENT_TIMEOUT_DEFAULT_MS,
  global: 'reject',
  privilegedAdmin: false,
} as const;

type NumericWorkerOption = Exclude<keyof typeof INBOX_WORKER_DEFAULTS, 'enabled'>;

/** Inclusive [min, max] bounds of each numeric worker option. */
export const INBOX_WORKER_BOUNDS: Record<NumericWorkerOption, readonly [number, number]> = {
  concurrency: [1, 100],
  prefetch: [0, 1_000],
  pollIntervalMs: [1, 3_600_000],
  leaseMs: [100, 86_400_000],
  heartbeatIntervalMs: [10, 43_200_000],
  transactionTimeoutMs: [100, 3_600_000],
  transactionMaxWaitMs: [1, 600_000],
  lockTimeoutMs: [1, 600_000],
  shutdownTimeoutMs: [0, 3_600_000],
  maxAttempts: [1, 1_000],
  retryBaseMs: [1, 86_400_000],
  retryMaxMs: [1, 86_400_000],
};

export const MAX_PAYLOAD_BYTES_BOUNDS = [1, 16 * 1024 * 1024] as const;

export type InboxWorkerOptions = Partial<{
  -readonly [K in keyof typeof INBOX_WORKER_DEFAULTS]: K extends 'enabled' ? boolean : number;
}> & {
  consumers?: readonly string[];
  /** PostgreSQL URL for a dedicated LISTEN connection: acceptance wakes an idle worker. */
  listenUrl?: string;
};

export interface InboxOptions<TTx = PrismaTransactionLike> {
  /** Handlers by consumer name. */
  handlers?: Readonly<Record<string, InboxHandler<TTx>>>;
  worker?: InboxWorkerOptions;
  maxPayloadBytes?: number;
  maxPendingMessages?: number;
  /**
   * How long ferry waits for the answer to each of its own statements outside a handler
   * transaction (acceptance, claims, lease renewals, retries): past it the statement fails with a
   * retriable FERRY_TIMEOUT, whatever the driver's timeouts. Default 30,000 ms.
   */
  statementTimeoutMs?: number;
  /** 'reject' (default): tenant-less messages are invalid. 'shared': accepted as global scope. */
  global?: 'reject' | 'shared';
  /** Enables InboxPrivilegedAdmin (cross-tenant). Default false. */
  privilegedAdmin?: boolean;
  /** Wrapper(s) around every handler call, outermost first. */
  handlerContext?: InboxHandlerContextWrapper<TTx> | readonly InboxHandlerContextWrapper<TTx>[];
  observer?: InboxObserver;
  logger?: Logger;
  /** Uniform random source for retry jitter. Default Math.random. */
  random?: RandomSource;
  /** Allow-list and extra keys for the redaction of stored and observed errors. */
  redact?: RedactionOptions;
}

export interface ResolvedInboxWorkerOptions {
  readonly enabled: boolean;
  readonly consumers: readonly string[];
  readonly concurrency: number;
  readonly prefetch: number;
  readonly listenUrl: string | undefined;
  readonly pollIntervalMs: number;
  readonly leaseMs: number;
  readonly heartbeatIntervalMs: number;
  readonly transactionTimeoutMs: number;
  readonly transactionMaxWaitMs: number;
  readonly lockTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
}

export interface ResolvedInboxOptions<TTx = PrismaTransactionLike> {
  readonly handlers: Readonly<Record<string, InboxHandler<TTx>>>;
  readonly worker: ResolvedInboxWorkerOptions;
  readonly maxPayloadBytes: number;
  readonly maxPendingMessages: number | null;
  readonly statementTimeoutMs: number;
  readonly global: 'reject' | 'shared';
  readonly privilegedAdmin: boolean;
  readonly wrappers: readonly InboxHandlerContextWrapper<TTx>[];
  readonly observer: InboxObserver | undefined;
  readonly logger: Logger | undefined;
  readonly random: RandomSource;
  readonly redact: Redactor;
}

const WORKER_KEYS = [...Object.keys(INBOX_WORKER_DEFAULTS), 'consumers', 'listenUrl'];
const TOP_KEYS = {
  handlers: true,
  worker: true,
  maxPayloadBytes: true,
  maxPendingMessages: true,
  statementTimeoutMs: true,
  global: true,
  privilegedAdmin: true,
  handlerContext: true,
  observer: true,
  logger: true,
  random: true,
  redact: true,
} as const satisfies OptionKeys<InboxOptions>;

/**
 * An option's value, or `fallback` when it was left out (undefined). null is a value, checked as
 * any other: `maxAttempts: null` (as if it meant "no limit") silently became 8 (review 87).
 */
function given<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

function integer(option: string, value: unknown, [min, max]: readonly [number, number]): number {
  return integerOption(option, value, min, max);
}

function resolveConsumers(value: unknown, handlerNames: readonly string[]): readonly string[] {
  if (value === undefined) return handlerNames;
  // Every index, holes included: some() skips a sparse array's holes, which let undefined through.
  if (
    !Array.isArray(value) ||
    Array.from(value).some((name) => typeof name !== 'string' || name.length === 0)
  ) {
    throw new FerryConfigError('worker.consumers', 'must be an array of non-empty consumer names');
  }
  const missing = value.filter((name: string) => !handlerNames.includes(name));
  if (missing.length > 0) {
    throw new FerryConfigError('worker.consumers', `no handler registered for: ${missing.join(', ')}`);
  }
  return [...new Set(value as string[])];
}

/** Worker options whose default follows another option (leaseHeartbeatInterval, ceilingOption). */
const DERIVED_WORKER_OPTIONS: ReadonlySet<NumericWorkerOption> = new Set([
  'heartbeatIntervalMs',
  'retryMaxMs',
]);

function resolveWorker(
  input: InboxWorkerOptions,
  handlerNames: readonly string[],
): ResolvedInboxWorkerOptions {
  input = knownKeysOption('worker.', input, WORKER_KEYS);
  const numbers = {} as Record<NumericWorkerOption, number>;
  for (const key of Object.keys(INBOX_WORKER_BOUNDS) as NumericWorkerOption[]) {
    if (DERIVED_WORKER_OPTIONS.has(key) && input[key] === undefined) continue;
    numbers[key] = integer(
      `worker.${key}`,
      given(input[key], INBOX_WORKER_DEFAULTS[key]),
      INBOX_WORKER_BOUNDS[key],
    );
  }
  const enabled = booleanOption('worker.enabled', given(input.enabled, INBOX_WORKER_DEFAULTS.enabled));
  numbers.heartbeatIntervalMs = leaseHeartbeatInterval(
    { duration: 'worker.leaseMs', interval: 'worker.heartbeatIntervalMs' },
    { value: numbers.leaseMs, given: input.leaseMs !== undefined },
    {
      value: input.heartbeatIntervalMs === undefined ? undefined : numbers.heartbeatIntervalMs,
      default: INBOX_WORKER_DEFAULTS.heartbeatIntervalMs,
      min: INBOX_WORKER_BOUNDS.heartbeatIntervalMs[0],
    },
  );
  numbers.retryMaxMs = ceilingOption(
    'worker.retryMaxMs',
    input.retryMaxMs === undefined ? undefined : numbers.retryMaxMs,
    INBOX_WORKER_DEFAULTS.retryMaxMs,
    { name: 'worker.retryBaseMs', value: numbers.retryBaseMs, given: input.retryBaseMs !== undefined },
  );
  const consumers = resolveConsumers(input.consumers, handlerNames);
  if (enabled && consumers.length === 0) {
    throw new FerryConfigError('worker.consumers', 'an enabled worker needs at least one registered handler');
  }
  const listenUrl =
    input.listenUrl === undefined ? undefined : checkListenUrl('worker.listenUrl', input.listenUrl);
  return { enabled, consumers, listenUrl, ...numbers };
}

/** The keys of a handler given as an object literal. */
const HANDLER_KEYS = { parse: true, handle: true } as const satisfies OptionKeys<
  Exclude<InboxHandler, (...args: never[]) => unknown>
>;

/**
 * One handler: a function, or an object whose `handle` is a function and whose `parse`, when
 * given, is one too. A `parse: 'v2'` accepted here made every receipt of the consumer DEAD at its
 * first message ("handler.parse is not a function", an invalid payload; review 83). An object
 * literal's unknown keys (`parser`, `handler`) are refused as every option's are; a class
 * instance keeps its own fields (a repository it was built with).
 */
function checkHandler(option: string, given: unknown): unknown {
  if (typeof given === 'function') return given;
  if (!isOptionsObject(option, given)) {
    throw new FerryConfigError(option, `must be a function or { parse?, handle }, got ${received(given)}`);
  }
  // An object literal is used as its snapshot (its parse and handle read once, as checked).
  const handler = isPlainOptions(option, given) ? knownKeysOption(`${option}.`, given, HANDLER_KEYS) : given;
  const { parse, handle } = handler as { parse?: unknown; handle?: unknown };
  if (typeof handle !== 'function') {
    throw new FerryConfigError(`${option}.handle`, `must be a function, got ${received(handle)}`);
  }
  functionOption(`${option}.parse`, parse);
  return handler;
}

/** Handlers by consumer name: a plain object (an array's indexes are no consumer names). */
function resolveHandlers<TTx>(handlers: unknown): Readonly<Record<string, InboxHandler<TTx>>> {
  if (handlers === undefined) return {};
  if (!isPlainOptions('handlers', handlers)) {
    throw new FerryConfigError(
      'handlers',
      `must be an object of handlers by consumer name, got ${received(handlers)}`,
    );
  }
  // Its snapshot: each handler read once, the one checked is the one run.
  const snapshot = recordOption('handlers.', handlers);
  for (const [name, handler] of Object.entries(snapshot)) {
    snapshot[name] = checkHandler(`handlers.${name}`, handler);
    const nameFault = consumerNameFault(name);
    if (nameFault !== null) {
      throw new FerryConfigError(
        `handlers.${name}`,
        `is a consumer name acceptance refuses (${nameFault}): no message could ever reach this handler`,
      );
    }
  }
  return snapshot as Record<string, InboxHandler<TTx>>;
}

/** Fills defaults and checks bounds once; throws FerryConfigError naming the bad option. */
export function resolveInboxOptions<TTx = PrismaTransactionLike>(
  input: InboxOptions<TTx> = {},
): ResolvedInboxOptions<TTx> {
  input = knownKeysOption('', input, TOP_KEYS);
  const handlers = resolveHandlers<TTx>(input.handlers);
  const worker = resolveWorker(given(input.worker, {}), Object.keys(handlers));
  const maxPayloadBytes = integer(
    'maxPayloadBytes',
    given(input.maxPayloadBytes, INBOX_DEFAULTS.maxPayloadBytes),
    MAX_PAYLOAD_BYTES_BOUNDS,
  );
  const maxPendingMessages =
    input.maxPendingMessages === undefined
      ? null
      : integer('maxPendingMessages', input.maxPendingMessages, [1, 1_000_000_000]);
  const statementTimeoutMs = integer(
    'statementTimeoutMs',
    given(input.statementTimeoutMs, INBOX_DEFAULTS.statementTimeoutMs),
    STATEMENT_TIMEOUT_BOUNDS,
  );
  const global = oneOfOption('global', given(input.global, INBOX_DEFAULTS.global), [
    'reject',
    'shared',
  ] as const);
  const privilegedAdmin = booleanOption(
    'privilegedAdmin',
    given(input.privilegedAdmin, INBOX_DEFAULTS.privilegedAdmin),
  );
  const wrappers = input.handlerContext === undefined ? [] : [input.handlerContext].flat();
  if (wrappers.some((w) => typeof w !== 'function')) {
    throw new FerryConfigError('handlerContext', 'must be a function or an array of functions');
  }
  functionOption('observer', input.observer);
  functionOption('random', input.random);
  const redact = redactOption(input.redact);
  return {
    handlers,
    worker,
    maxPayloadBytes,
    maxPendingMessages,
    statementTimeoutMs,
    global,
    privilegedAdmin,
    wrappers: wrappers as InboxHandlerContextWrapper<TTx>[],
    observer: input.observer,
    logger: loggerOption('logger', input.logger),
    random: input.random ?? Math.random,
    redact,
  };
}
