import type { Logger } from 'pino';
import { FerryConfigError } from '../errors';
import type { PrismaTransactionLike } from '../sql/executor';
import type { RandomSource } from './backoff';
import type { InboxHandler, InboxHandlerContextWrapper, InboxObserver } from './types';

/** Worker defaults and bounds; docs/inbox.md quotes this table. */
export const INBOX_WORKER_DEFAULTS = {
  enabled: false,
  concurrency: 4,
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
  global: 'reject',
  privilegedAdmin: false,
} as const;

type NumericWorkerOption = Exclude<keyof typeof INBOX_WORKER_DEFAULTS, 'enabled'>;

/** Inclusive [min, max] bounds of each numeric worker option. */
export const INBOX_WORKER_BOUNDS: Record<NumericWorkerOption, readonly [number, number]> = {
  concurrency: [1, 100],
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
};

export interface InboxOptions<TTx = PrismaTransactionLike> {
  /** Handlers by consumer name. */
  handlers?: Readonly<Record<string, InboxHandler<TTx>>>;
  worker?: InboxWorkerOptions;
  maxPayloadBytes?: number;
  maxPendingMessages?: number;
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
}

export interface ResolvedInboxWorkerOptions {
  readonly enabled: boolean;
  readonly consumers: readonly string[];
  readonly concurrency: number;
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
  readonly global: 'reject' | 'shared';
  readonly privilegedAdmin: boolean;
  readonly wrappers: readonly InboxHandlerContextWrapper<TTx>[];
  readonly observer: InboxObserver | undefined;
  readonly logger: Logger | undefined;
  readonly random: RandomSource;
}

const WORKER_KEYS = new Set<string>([...Object.keys(INBOX_WORKER_DEFAULTS), 'consumers']);
const TOP_KEYS = new Set<string>([
  'handlers',
  'worker',
  'maxPayloadBytes',
  'maxPendingMessages',
  'global',
  'privilegedAdmin',
  'handlerContext',
  'observer',
  'logger',
  'random',
]);

function integer(option: string, value: unknown, [min, max]: readonly [number, number]): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new FerryConfigError(option, 'must be an integer');
  if (value < min || value > max) throw new FerryConfigError(option, `must be between ${min} and ${max}`);
  return value;
}

function unknownKeys(prefix: string, value: object, known: Set<string>): void {
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new FerryConfigError(`${prefix}${key}`, 'is not a known option');
  }
}

function resolveConsumers(value: unknown, handlerNames: readonly string[]): readonly string[] {
  if (value === undefined) return handlerNames;
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string' || name.length === 0)) {
    throw new FerryConfigError('worker.consumers', 'must be an array of non-empty consumer names');
  }
  const missing = value.filter((name: string) => !handlerNames.includes(name));
  if (missing.length > 0) {
    throw new FerryConfigError('worker.consumers', `no handler registered for: ${missing.join(', ')}`);
  }
  return [...new Set(value as string[])];
}

function resolveWorker(
  input: InboxWorkerOptions,
  handlerNames: readonly string[],
): ResolvedInboxWorkerOptions {
  unknownKeys('worker.', input, WORKER_KEYS);
  const numbers = {} as Record<NumericWorkerOption, number>;
  for (const key of Object.keys(INBOX_WORKER_BOUNDS) as NumericWorkerOption[]) {
    numbers[key] = integer(
      `worker.${key}`,
      input[key] ?? INBOX_WORKER_DEFAULTS[key],
      INBOX_WORKER_BOUNDS[key],
    );
  }
  const enabled = input.enabled ?? INBOX_WORKER_DEFAULTS.enabled;
  if (typeof enabled !== 'boolean') throw new FerryConfigError('worker.enabled', 'must be a boolean');
  if (numbers.heartbeatIntervalMs * 2 >= numbers.leaseMs) {
    throw new FerryConfigError('worker.heartbeatIntervalMs', 'must be less than half of worker.leaseMs');
  }
  if (numbers.retryMaxMs < numbers.retryBaseMs) {
    throw new FerryConfigError('worker.retryMaxMs', 'must be at least worker.retryBaseMs');
  }
  const consumers = resolveConsumers(input.consumers, handlerNames);
  if (enabled && consumers.length === 0) {
    throw new FerryConfigError('worker.consumers', 'an enabled worker needs at least one registered handler');
  }
  return { enabled, consumers, ...numbers };
}

function resolveHandlers<TTx>(handlers: unknown): Readonly<Record<string, InboxHandler<TTx>>> {
  if (handlers === undefined) return {};
  if (typeof handlers !== 'object' || handlers === null)
    throw new FerryConfigError('handlers', 'must be an object');
  for (const [name, handler] of Object.entries(handlers)) {
    const valid =
      typeof handler === 'function' ||
      (typeof handler === 'object' &&
        handler !== null &&
        typeof (handler as { handle?: unknown }).handle === 'function');
    if (!valid || name.length === 0)
      throw new FerryConfigError(`handlers.${name}`, 'must be a function or { handle }');
  }
  return handlers as Record<string, InboxHandler<TTx>>;
}

/** Fills defaults and checks bounds once; throws FerryConfigError naming the bad option. */
export function resolveInboxOptions<TTx = PrismaTransactionLike>(
  input: InboxOptions<TTx> = {},
): ResolvedInboxOptions<TTx> {
  unknownKeys('', input, TOP_KEYS);
  const handlers = resolveHandlers<TTx>(input.handlers);
  const worker = resolveWorker(input.worker ?? {}, Object.keys(handlers));
  const maxPayloadBytes = integer(
    'maxPayloadBytes',
    input.maxPayloadBytes ?? INBOX_DEFAULTS.maxPayloadBytes,
    MAX_PAYLOAD_BYTES_BOUNDS,
  );
  const maxPendingMessages =
    input.maxPendingMessages === undefined
      ? null
      : integer('maxPendingMessages', input.maxPendingMessages, [1, 1_000_000_000]);
  const global = input.global ?? INBOX_DEFAULTS.global;
  if (global !== 'reject' && global !== 'shared')
    throw new FerryConfigError('global', "must be 'reject' or 'shared'");
  const privilegedAdmin = input.privilegedAdmin ?? INBOX_DEFAULTS.privilegedAdmin;
  if (typeof privilegedAdmin !== 'boolean')
    throw new FerryConfigError('privilegedAdmin', 'must be a boolean');
  const wrappers = input.handlerContext === undefined ? [] : [input.handlerContext].flat();
  if (wrappers.some((w) => typeof w !== 'function')) {
    throw new FerryConfigError('handlerContext', 'must be a function or an array of functions');
  }
  if (input.observer !== undefined && typeof input.observer !== 'function') {
    throw new FerryConfigError('observer', 'must be a function');
  }
  if (input.random !== undefined && typeof input.random !== 'function') {
    throw new FerryConfigError('random', 'must be a function');
  }
  return {
    handlers,
    worker,
    maxPayloadBytes,
    maxPendingMessages,
    global,
    privilegedAdmin,
    wrappers: wrappers as InboxHandlerContextWrapper<TTx>[],
    observer: input.observer,
    logger: input.logger,
    random: input.random ?? Math.random,
  };
}
