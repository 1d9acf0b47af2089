import { FerryConfigError } from '../errors';
import {
  booleanOption,
  executorOption,
  integerOption,
  knownKeysOption,
  received,
  requiredOptions,
  timerOption,
  type OptionKeys,
} from '../optionChecks';
import type { HealthThresholds } from '../outbox/adminTypes';
import type { HealthOptions, InboxThresholds } from './types';

const KEYS = {
  db: true,
  relay: true,
  inbox: true,
  transports: true,
  maxCycleAgeMs: true,
  checkTimeoutMs: true,
  checkSchema: true,
  outboxThresholds: true,
  inboxThresholds: true,
} as const satisfies OptionKeys<HealthOptions>;
const OUTBOX_THRESHOLD_KEYS = {
  maxOldestPendingAgeMs: true,
  maxFailed: true,
  maxExpiredLeases: true,
} as const satisfies OptionKeys<HealthThresholds>;
const INBOX_THRESHOLD_KEYS = {
  maxDead: true,
  maxOldestPendingAgeMs: true,
} as const satisfies OptionKeys<InboxThresholds>;

/** Longest timer Node keeps (a longer one fires at once). */

export interface ResolvedHealthOptions {
  readonly maxCycleAgeMs: number;
  readonly checkTimeoutMs: number;
}

function thresholds(prefix: string, value: object | undefined, keys: Readonly<Record<string, true>>): void {
  knownKeysOption(prefix, value, keys);
  for (const [key, count] of Object.entries(value ?? {})) {
    if (count !== undefined) integerOption(`${prefix}${key}`, count, 0);
  }
}

/** createHealth's options checked like every options object (unknown keys, types, values shown). */
export function resolveHealthOptions(options: HealthOptions): ResolvedHealthOptions {
  requiredOptions(options, 'db');
  knownKeysOption('', options, KEYS);
  executorOption('db', options.db);
  if (options.transports !== undefined && !Array.isArray(options.transports)) {
    throw new FerryConfigError(
      'transports',
      `must be an array of { name, check }, got ${received(options.transports)}`,
    );
  }
  booleanOption('checkSchema', options.checkSchema ?? true);
  thresholds('outboxThresholds.', options.outboxThresholds, OUTBOX_THRESHOLD_KEYS);
  thresholds('inboxThresholds.', options.inboxThresholds, INBOX_THRESHOLD_KEYS);
  return {
    maxCycleAgeMs: integerOption('maxCycleAgeMs', options.maxCycleAgeMs ?? 60_000, 1),
    checkTimeoutMs: timerOption('checkTimeoutMs', options.checkTimeoutMs ?? 5_000, 1),
  };
}
