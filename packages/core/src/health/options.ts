import { FerryConfigError } from '../errors';
import {
  booleanOption,
  executorOption,
  integerOption,
  isPlainOptions,
  knownKeysOption,
  nonEmptyOption,
  received,
  recordOption,
  requiredOptions,
  timerOption,
  type OptionKeys,
} from '../optionChecks';
import type { HealthThresholds } from '../outbox/adminTypes';
import type { HealthOptions, InboxThresholds, LoopSource, TransportProbe } from './types';

const KEYS = {
  db: true,
  relay: true,
  inbox: true,
  relays: true,
  inboxes: true,
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

/**
 * A loop source and the suffix of its checks' names: '' for `relay` / `inbox` (checks `relay`,
 * `inbox worker`, ...), ` "kafka"` for `relays.kafka` (`relay "kafka"`, `relay circuit "kafka"`).
 */
export interface NamedLoop {
  readonly suffix: string;
  readonly source: LoopSource;
}

export interface ResolvedHealthOptions {
  /** The options' snapshot (knownKeysOption): each option and threshold read once, as checked. */
  readonly options: HealthOptions;
  /** `relay`, then `relays` in their order; `inbox`, then `inboxes`: each source read from its record once. */
  readonly relays: readonly NamedLoop[];
  readonly inboxes: readonly NamedLoop[];
  readonly maxCycleAgeMs: number;
  readonly checkTimeoutMs: number;
}

function thresholds<T extends object>(
  prefix: string,
  value: T | undefined,
  keys: Readonly<Record<string, true>>,
): T | undefined {
  value = knownKeysOption(prefix, value, keys);
  for (const [key, count] of Object.entries(value ?? {})) {
    if (count !== undefined) integerOption(`${prefix}${key}`, count, 0);
  }
  return value;
}

/** The longest name of a source or transport: it is part of its checks' names. */
const NAME_MAX_CHARS = 200;

/**
 * A name a check is named by (`relay "<name>"`, `transport <name>`): bounded, as a check's name
 * is part of every report, log line and label of the endpoint. The refusal quotes its start only.
 */
function boundedName(option: string, name: string): void {
  if (name.length <= NAME_MAX_CHARS) return;
  throw new FerryConfigError(
    option,
    `has a name of ${name.length} characters (${JSON.stringify(name.slice(0, 40))}…): names are at most ${NAME_MAX_CHARS} characters, as they name the health checks`,
  );
}

/**
 * One `transports` entry: an object with a non-empty `name` and a `check` function (its own or
 * its class's; other fields are its own business). Unchecked, a null entry made readiness() and
 * details() reject, and one without `check` was a down probe for ever (review 111).
 */
function transportProbe(probe: TransportProbe | null | undefined, index: number): void {
  const at = `transports[${index}]`;
  if (typeof probe !== 'object' || probe === null) {
    throw new FerryConfigError(at, `must be an object { name, check }, got ${received(probe)}`);
  }
  nonEmptyOption(`${at}.name`, probe.name);
  boundedName(`${at}.name`, probe.name);
  if (typeof probe.check !== 'function') {
    throw new FerryConfigError(
      `${at}.check`,
      `must be a function such as () => consumer.check(), got ${received(probe.check)}`,
    );
  }
}

/**
 * Each transport's own name: two alike made two checks named `transport <name>`, so the one down
 * could not be told from the one up (review 123).
 */
function distinctNames(probes: readonly TransportProbe[]): void {
  const first = new Map<string, number>();
  probes.forEach((probe, index) => {
    const earlier = first.get(probe.name);
    if (earlier !== undefined) {
      throw new FerryConfigError(
        `transports[${index}].name`,
        `is the name of transports[${earlier}] too, got ${received(probe.name)}: each transport needs its own name (its check is named \`transport <name>\`)`,
      );
    }
    first.set(probe.name, index);
  });
}

/**
 * `relay` / `inbox`: left out, or a loop source (the relay, the Inbox, an object of getters) whose
 * `lastCycleAt` is a Date or null and whose `state`, if any, is a string. Anything else (a string, a
 * factory, a promise, a service in place of its source) was liveness `starting`, then down for
 * ever (an orchestrator restarting a healthy process); a `lastCycleAt` of another type made
 * liveness() reject (review 123).
 */
function loopSource(kind: 'relay' | 'inbox', name: string, source: unknown): void {
  if (source === undefined) return;
  const example = kind === 'relay' ? 'the relay createRelay() returns' : 'the Inbox';
  if (typeof source !== 'object' || source === null) {
    throw new FerryConfigError(
      name,
      `must be a loop source such as ${example} ({ lastCycleAt, state? }); leave it out when there is none; got ${received(source)}`,
    );
  }
  const { lastCycleAt, state } = source as Partial<LoopSource>;
  if (lastCycleAt !== null && !(lastCycleAt instanceof Date)) {
    throw new FerryConfigError(
      `${name}.lastCycleAt`,
      `must be a Date or null (the loop's last cycle, as on ${example}), got ${received(lastCycleAt)}`,
    );
  }
  if (state !== undefined && typeof state !== 'string') {
    throw new FerryConfigError(`${name}.state`, `must be a string, got ${received(state)}`);
  }
}

/**
 * `relay` and `relays` (or `inbox` and `inboxes`) as one list: the single source unnamed, then the
 * record's, each named by its key. The record is a plain object (a Map, a class instance or one
 * loop source in its place is refused) read once (recordOption: a getter or Proxy cannot answer
 * another source later); a name must be non-empty; an entry set to `undefined` is left out, as
 * the option left out. One source given twice (under two names, or as `relay` and in `relays`)
 * is refused: its checks would be reported twice, as two loops.
 */
function namedLoops(
  kind: 'relay' | 'inbox',
  single: LoopSource | undefined,
  option: 'relays' | 'inboxes',
  given: Readonly<Record<string, LoopSource>> | undefined,
): NamedLoop[] {
  loopSource(kind, kind, single);
  const loops: NamedLoop[] = single === undefined ? [] : [{ suffix: '', source: single }];
  const where = new Map<LoopSource, string>(single === undefined ? [] : [[single, kind]]);
  if (given === undefined) return loops;
  const shape = `an object of loop sources by name, such as { kafka: kafkaRelay, rabbitmq: rabbitRelay }`;
  if (!isPlainOptions(option, given)) {
    throw new FerryConfigError(option, `must be ${shape}, got ${received(given)}`);
  }
  const record = recordOption(`${option}.`, given);
  // `relays: relay` for `relay: relay` (an object of getters: a plain one): said as such, not as
  // its fields refused one by one.
  const { lastCycleAt } = record as { lastCycleAt?: unknown };
  if (lastCycleAt === null || lastCycleAt instanceof Date) {
    throw new FerryConfigError(
      option,
      `must be ${shape}, got one loop source: pass it as ${kind}, or name it ({ name: source })`,
    );
  }
  for (const [name, source] of Object.entries(record)) {
    if (name === '') throw new FerryConfigError(option, `has an empty name: each ${kind} needs a name`);
    boundedName(option, name);
    const at = `${option}.${name}`;
    loopSource(kind, at, source);
    if (source === undefined) continue;
    const earlier = where.get(source);
    if (earlier !== undefined) {
      throw new FerryConfigError(
        at,
        `is the same loop source as ${earlier}: give each ${kind} once (its checks would be reported twice)`,
      );
    }
    where.set(source, at);
    loops.push({ suffix: ` ${JSON.stringify(name)}`, source });
  }
  return loops;
}

/** createHealth's options checked like every options object (unknown keys, types, values shown). */
export function resolveHealthOptions(options: HealthOptions): ResolvedHealthOptions {
  requiredOptions(options, 'db');
  options = knownKeysOption('', options, KEYS);
  executorOption('db', options.db);
  if (options.transports !== undefined && !Array.isArray(options.transports)) {
    throw new FerryConfigError(
      'transports',
      `must be an array of { name, check }, got ${received(options.transports)}`,
    );
  }
  // By index, not forEach: a sparse array's hole is an entry readiness reads as undefined. Copied
  // as read: the probes checked are the probes used.
  const given = options.transports ?? [];
  const probes: TransportProbe[] = [];
  for (let index = 0; index < given.length; index += 1) {
    const probe = given[index];
    transportProbe(probe, index);
    probes.push(probe as TransportProbe);
  }
  distinctNames(probes);
  const relays = namedLoops('relay', options.relay, 'relays', options.relays);
  const inboxes = namedLoops('inbox', options.inbox, 'inboxes', options.inboxes);
  booleanOption('checkSchema', options.checkSchema ?? true);
  const outboxThresholds = thresholds('outboxThresholds.', options.outboxThresholds, OUTBOX_THRESHOLD_KEYS);
  const inboxThresholds = thresholds('inboxThresholds.', options.inboxThresholds, INBOX_THRESHOLD_KEYS);
  return {
    options: {
      ...options,
      ...(options.transports === undefined ? {} : { transports: probes }),
      ...(outboxThresholds === undefined ? {} : { outboxThresholds }),
      ...(inboxThresholds === undefined ? {} : { inboxThresholds }),
    },
    relays,
    inboxes,
    maxCycleAgeMs: integerOption('maxCycleAgeMs', options.maxCycleAgeMs ?? 60_000, 1),
    checkTimeoutMs: timerOption('checkTimeoutMs', options.checkTimeoutMs ?? 5_000, 1),
  };
}
