/**
 * Review 102 (ready() of every transport's consumer, awaitReady), failing on main.
 *
 * What I did: a consumer that never attaches, and ready({ timeoutMs }) called again and again (a
 * start-up probe retrying it), each call timing out; then a full garbage collection.
 *
 * What happened on main: every call added a reaction to the consumer's one ready promise, never
 * removed, holding that call's closure and its returned promise until the consumer attached: calls
 * that had long timed out were kept, one more per call, for the consumer's whole life.
 *
 * What should happen: a ready() call that ended (timed out, closed, refused) keeps nothing on the
 * consumer; the ready promise holds one reaction of ferry's whatever the number of waiting calls,
 * and calls still waiting all settle when it does.
 */
import { AttachAttempts, awaitReady } from '@ferry/core/transport';
import { collectGarbageSoon, heldBy } from '../../../test-support/deadlines';

const CALLS = 50;

it('ready() calls that timed out on a consumer that never attached are not kept by its ready promise', async () => {
  const never = new Promise<void>(() => undefined);
  const closed = new AbortController();
  const attempts = new AttachAttempts();
  const calls: Array<WeakRef<Promise<void>>> = [];
  // Each call made and awaited in a frame of its own, so the test holds none of them.
  const probe = async (): Promise<void> => {
    const call = awaitReady('consumer', never, closed.signal, { timeoutMs: 0 }, attempts);
    calls.push(new WeakRef(call));
    await call.catch(() => undefined);
  };
  for (let i = 0; i < CALLS; i += 1) await probe();
  await collectGarbageSoon();
  expect({
    kept: calls.filter((call) => call.deref() !== undefined).length,
    closeListeners: heldBy(closed.signal),
  }).toEqual({ kept: 0, closeListeners: 0 });
});

it('every ready() call still waiting settles when the consumer attaches, the ones that ended do not', async () => {
  let attach!: () => void;
  const ready = new Promise<void>((resolve) => (attach = resolve));
  const closed = new AbortController();
  const timedOut = await awaitReady('consumer', ready, closed.signal, { timeoutMs: 0 }).catch(
    (error: unknown) => error,
  );
  const waiting = [1, 2, 3].map(() => awaitReady('consumer', ready, closed.signal, { timeoutMs: 60_000 }));
  attach();
  await expect(Promise.all(waiting)).resolves.toEqual([undefined, undefined, undefined]);
  expect(timedOut).toMatchObject({ code: 'FERRY_TIMEOUT' });
  // After the consumer attached, a new call resolves as well.
  await expect(awaitReady('consumer', ready, closed.signal, { timeoutMs: 60_000 })).resolves.toBeUndefined();
});
