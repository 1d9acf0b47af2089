import {
  INBOX_STATUSES,
  type Inbox,
  type InboxRecord,
  type InboxScopedAdmin,
  type RunOnceResult,
} from '@ferry/core';
import {
  functionOption,
  integerOption,
  knownKeysOption,
  methodsOption,
  oneOfOption,
  received,
  timerOption,
  type OptionKeys,
} from '@ferry/core/transport';
import { CallUnsettled, WaitDeadline } from './waitDeadline';

/**
 * drainInbox ran out of rounds or time while receipts were still being claimed, or its deadline
 * came while a `runOnce()` call had not settled (`unsettledAfterMs`: the timeout).
 */
export class InboxDrainTimeoutError extends Error {
  readonly code = 'FERRY_TIMEOUT' as const;
  constructor(
    readonly rounds: number,
    readonly processed: number,
    readonly unsettledAfterMs?: number,
  ) {
    super(
      unsettledAfterMs === undefined
        ? `drainInbox: work was still being claimed after ${rounds} rounds (${processed} receipts processed)`
        : `drainInbox: inbox.runOnce() (round ${rounds + 1}) had not settled after ${unsettledAfterMs} ms (${processed} receipts processed)`,
    );
    this.name = 'InboxDrainTimeoutError';
  }
}

/**
 * waitForInboxRecord did not see the expected state in time; `last` is what it saw, `lastError`
 * the retriable error of its last `get(id)` when that call failed (the database not there yet).
 * `unsettledAfterMs` (the timeout) when the deadline came while a `get(id)` call had not settled.
 */
export class InboxRecordWaitTimeoutError extends Error {
  readonly code = 'FERRY_TIMEOUT' as const;
  constructor(
    readonly id: string,
    readonly expected: string,
    readonly last: InboxRecord | null,
    readonly unsettledAfterMs?: number,
    readonly lastError?: unknown,
  ) {
    const pending =
      unsettledAfterMs === undefined ? '' : `: get(id) had not settled after ${unsettledAfterMs} ms`;
    const failed = lastError === undefined ? '' : `; the last get(id) failed: ${errorText(lastError)}`;
    super(
      `waitForInboxRecord: record ${id} did not reach ${expected}${pending}; last seen ${
        last ? `${last.status} (attempts ${last.attempts}, lastError ${last.lastError ?? 'none'})` : 'nothing'
      }${failed}`,
    );
    this.name = 'InboxRecordWaitTimeoutError';
  }
}

/** `code: message` of an error get(id) threw, bounded; never throws (review 136: see describeValue in wait.ts). */
function errorText(error: unknown): string {
  let text: string;
  try {
    const { code, message } = error as { code?: unknown; message?: unknown };
    text = `${typeof code === 'string' ? `${code}: ` : ''}${typeof message === 'string' ? message : String(error)}`;
  } catch {
    text = received(error);
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * A FerryError that says retrying can help (`retriable: true`: the database unavailable, a
 * timeout): waitForInboxRecord reads it as "not yet". Read by shape, not instanceof (another copy
 * of @ferry/core), and never throwing (a hostile getter is not retriable).
 */
function isRetriable(error: unknown): boolean {
  try {
    return (
      typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true
    );
  } catch {
    return false;
  }
}

export interface DrainInboxOptions {
  /** Upper bound of runOnce() rounds. Default 1,000. */
  readonly maxRounds?: number;
  /** Overall deadline in ms. Default 30,000. */
  readonly timeoutMs?: number;
}

export interface DrainInboxResult extends Omit<RunOnceResult, 'claimed'> {
  readonly processed: number;
  readonly rounds: number;
}

/**
 * Runs `inbox.runOnce()` until a round claims nothing (work not yet due, e.g. a scheduled
 * retry, is left alone). Throws InboxDrainTimeoutError when rounds or time run out, also when a
 * runOnce() call has not settled at the deadline (it is not waited for).
 */
const DRAIN_KEYS = { maxRounds: true, timeoutMs: true } as const satisfies OptionKeys<DrainInboxOptions>;

export async function drainInbox(
  inbox: Pick<Inbox, 'runOnce'>,
  options: DrainInboxOptions = {},
): Promise<DrainInboxResult> {
  methodsOption('inbox', inbox, ['runOnce'], 'an Inbox (with runOnce())');
  options = knownKeysOption('', options, DRAIN_KEYS);
  const maxRounds = integerOption('maxRounds', options.maxRounds ?? 1_000, 1);
  const deadline = new WaitDeadline(timerOption('timeoutMs', options.timeoutMs ?? 30_000, 0));
  const total = { processed: 0, rounds: 0, completed: 0, retried: 0, dead: 0, leaseLost: 0, unresolved: 0 };
  try {
    while (total.rounds < maxRounds && !deadline.expired) {
      const round = await deadline
        .race(() => inbox.runOnce())
        .catch((error: unknown) => {
          if (CallUnsettled.is(error)) {
            throw new InboxDrainTimeoutError(total.rounds, total.processed, error.timeoutMs);
          }
          throw error;
        });
      total.rounds += 1;
      if (round.claimed === 0) return total;
      total.processed += round.claimed;
      total.completed += round.completed;
      total.retried += round.retried;
      total.dead += round.dead;
      total.leaseLost += round.leaseLost;
      total.unresolved += round.unresolved;
    }
  } finally {
    deadline.end();
  }
  throw new InboxDrainTimeoutError(total.rounds, total.processed);
}

export interface WaitForInboxRecordOptions {
  /** Wait for this status, or for `until` to hold. Default: COMPLETED. */
  readonly status?: InboxRecord['status'];
  readonly until?: (record: InboxRecord) => boolean;
  /** Default 10,000 ms. */
  readonly timeoutMs?: number;
  /** Default 25 ms. */
  readonly intervalMs?: number;
}

const WAIT_KEYS = {
  status: true,
  until: true,
  timeoutMs: true,
  intervalMs: true,
} as const satisfies OptionKeys<WaitForInboxRecordOptions>;

/**
 * Polls a scoped admin's get(id) until the record matches; typed diagnostic error on timeout,
 * also when a get(id) call has not settled at the deadline (it is not waited for). A get(id) that
 * fails with a retriable FerryError (the database unavailable, a timeout) is "not yet", named by
 * the timeout's error; any other error ends the wait with that error.
 */
export async function waitForInboxRecord(
  scope: Pick<InboxScopedAdmin, 'get'>,
  id: string,
  options: WaitForInboxRecordOptions = {},
): Promise<InboxRecord> {
  methodsOption('scope', scope, ['get'], 'an inbox admin scope (with get(id))');
  options = knownKeysOption('', options, WAIT_KEYS);
  const status = oneOfOption('status', options.status ?? 'COMPLETED', INBOX_STATUSES);
  const until = functionOption('until', options.until);
  const matches = until ?? ((record: InboxRecord) => record.status === status);
  const expected = until ? 'the expected condition' : status;
  const deadline = new WaitDeadline(timerOption('timeoutMs', options.timeoutMs ?? 10_000, 0));
  const intervalMs = timerOption('intervalMs', options.intervalMs ?? 25, 0);
  let last: InboxRecord | null = null;
  let lastError: unknown;
  const timedOut = () => new InboxRecordWaitTimeoutError(id, expected, last, undefined, lastError);
  try {
    for (;;) {
      try {
        last = await deadline.race(() => scope.get(id));
        lastError = undefined;
      } catch (error) {
        if (CallUnsettled.is(error))
          throw new InboxRecordWaitTimeoutError(id, expected, last, error.timeoutMs, lastError);
        if (!isRetriable(error)) throw error;
        lastError = error;
      }
      if (lastError === undefined && last && matches(last)) return last;
      if (deadline.expired) throw timedOut();
      await deadline.pause(intervalMs);
      if (deadline.expired) throw timedOut();
    }
  } finally {
    deadline.end();
  }
}
