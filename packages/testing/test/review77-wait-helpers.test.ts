/**
 * Review 77 (hostile user of @ferry/testing's waits). README: "Every wait has a deadline, also
 * when a call it makes never answers"; waitUntil "At the deadline `WaitTimeoutError` (`what`,
 * `timeoutMs`, the `last` answer or error)"; drainInbox and waitForInboxRecord fail with their
 * typed FERRY_TIMEOUT errors at `timeoutMs`.
 *
 * jest.useFakeTimers() (in a test, or `fakeTimers: { enableGlobally: true }` in jest's config)
 * is a common set-up of application tests. The helpers build their deadline and their pause
 * between polls on the global setTimeout (core's deadlineSignal and abortableDelay), which jest
 * then fakes: the deadline never comes and a wait whose first answer is "not yet" never ends. The
 * test hangs until jest's own test timeout ("Exceeded timeout of 5000 ms"), without the
 * WaitTimeoutError, its `what` or its `last` answer. (Node's `node:timers` is not faked by jest:
 * this file races each wait against it to fail instead of hanging.)
 */
import type { InboxRecord } from '@ferry/core';
import {
  InboxDrainTimeoutError,
  InboxRecordWaitTimeoutError,
  WaitTimeoutError,
  drainInbox,
  waitForInboxRecord,
  waitUntil,
} from '@ferry/testing';
import { settledOrHung as settledWithin } from './support/settledOrHung';

/** How long (real time) a wait of 200 ms is given to end before it counts as hung. */
const HUNG_AFTER_MS = 5_000;

/** What `waiting` settles to within HUNG_AFTER_MS of real time: its error, its value, or 'hung'. */
function settledOrHung(waiting: Promise<unknown>): Promise<unknown> {
  return settledWithin(waiting, HUNG_AFTER_MS, 'hung past its 200 ms deadline');
}

describe('review 77: the wait helpers under jest.useFakeTimers()', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('waitUntil fails at its deadline with WaitTimeoutError, not hangs, when the probe answers "not yet"', async () => {
    const outcome = await settledOrHung(waitUntil('the order projected', () => false, { timeoutMs: 200 }));
    expect(outcome).toBeInstanceOf(WaitTimeoutError);
  });

  test('waitForInboxRecord fails at its deadline with the last record seen, not hangs', async () => {
    const pending = {
      id: 'r-1',
      status: 'PENDING',
      attempts: 1,
      lastError: 'boom',
    } as unknown as InboxRecord;
    const scope = { get: async (): Promise<InboxRecord | null> => pending };
    const outcome = await settledOrHung(waitForInboxRecord(scope, 'r-1', { timeoutMs: 200 }));
    expect(outcome).toBeInstanceOf(InboxRecordWaitTimeoutError);
    expect(outcome).toMatchObject({ code: 'FERRY_TIMEOUT', last: { status: 'PENDING' } });
  });

  test('drainInbox fails at its deadline when a runOnce() never settles, not hangs', async () => {
    const inbox = { runOnce: () => new Promise<never>(() => undefined) };
    const outcome = await settledOrHung(drainInbox(inbox, { timeoutMs: 200 }));
    expect(outcome).toBeInstanceOf(InboxDrainTimeoutError);
  });
});

describe('review 77: WaitTimeoutError', () => {
  test('carries `what` it waited for, as the README lists it with `timeoutMs` and `last`', async () => {
    const error = await waitUntil('the order projected', () => false, { timeoutMs: 20 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ what: 'the order projected', timeoutMs: 20, last: false });
  });
});
