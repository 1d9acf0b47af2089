/**
 * Review 38: a listenUrl that pg cannot parse is accepted by createRelay / new Inbox, and then
 * start() throws a raw TypeError ('Invalid URL') after the relay or worker already set its state
 * to 'running': its poll loop is never started, a second start() is a silent no-op, and events
 * stay PENDING while `relay.state` says 'running' (liveness reports it 'starting', up, for
 * maxCycleAgeMs). A listenUrl whose sslrootcert file is missing (a secret not mounted yet) does the
 * same with an ENOENT from start().
 *
 * Cause: NotifyListener.connect() builds `new pg.Client({ connectionString })` synchronously from
 * start() (`void this.connect()` does not catch a synchronous throw); pg parses the URL (and reads
 * sslrootcert / sslcert / sslkey files) in that constructor. The options only check that listenUrl
 * is a non-empty string (relayConfig.ts nonEmptyOption, inbox/options.ts).
 *
 * Contract: createRelay "options are resolved (and validated) here, throwing FerryConfigError"
 * (relay.ts); docs/outbox.md "Wake-up": "Polling every pollInterval always runs, so lost
 * notifications only delay delivery"; docs/inbox.md: "Polling never depends on it".
 *
 * Why it matters: a typo in an environment variable leaves a process that looks started and
 * healthy but relays nothing (or, in @ferry/nestjs, fails bootstrap with an untyped TypeError).
 *
 * Fix direction: parse listenUrl when options are resolved (FerryConfigError naming listenUrl /
 * worker.listenUrl), and let the listener treat a throwing connect like a failed one (log, back
 * off, retry) so polling is never affected.
 */
import { createRelay, emit, FerryConfigError, Inbox, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { quietLogger } from './inbox/helpers';
import { silent, waitFor } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A port that is not a number: pg's URL parser (WHATWG URL) throws TypeError 'Invalid URL'. */
const MALFORMED = 'postgres://app:s3cret@127.0.0.1:54x2/app';

function configError(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  return undefined;
}

it('createRelay refuses a malformed listenUrl with FerryConfigError (listenUrl)', async () => {
  let relay: Relay | undefined;
  const refused = configError(() => {
    relay = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      listenUrl: MALFORMED,
      logger: silent,
      options: { pollInterval: 20 },
    });
  });
  // Today createRelay accepts it; start() then throws TypeError('Invalid URL') and leaves the relay
  // 'running' without a poll loop.
  await relay?.close();
  expect(refused).toBeInstanceOf(FerryConfigError);
  expect((refused as FerryConfigError).option).toBe('listenUrl');
});

it('new Inbox refuses a malformed worker.listenUrl with FerryConfigError (worker.listenUrl)', async () => {
  let inbox: Inbox | undefined;
  const refused = configError(() => {
    inbox = new Inbox(t.prisma, {
      logger: quietLogger,
      handlers: { work: async () => undefined },
      worker: { pollIntervalMs: 20, listenUrl: MALFORMED },
    });
  });
  await inbox?.close();
  expect(refused).toBeInstanceOf(FerryConfigError);
  expect((refused as FerryConfigError).option).toBe('worker.listenUrl');
});

it('a listenUrl whose sslrootcert file is missing is refused by createRelay, or the relay still relays by polling', async () => {
  const listenUrl = `${t.url}${t.url.includes('?') ? '&' : '?'}sslrootcert=/nonexistent/review38/ca.pem`;
  const outcome = async (): Promise<string> => {
    let relay: Relay;
    try {
      relay = createRelay({
        db: t.db,
        publisher: new InMemoryPublisher(),
        listenUrl,
        logger: silent,
        options: { pollInterval: 20 },
      });
    } catch (error) {
      return error instanceof FerryConfigError ? 'refused' : `createRelay threw ${String(error)}`;
    }
    try {
      try {
        relay.start();
      } catch (error) {
        return `start() threw ${String(error)}`;
      }
      const { id } = await emit(t.db, { type: 'review38.sslrootcert', payload: {} });
      await waitFor(async () => {
        const [row] = await t.db.query<{ status: string }>(
          'SELECT status FROM outbox_events WHERE id = $1::uuid',
          [id],
        );
        return row?.status === 'SENT';
      }, 10_000);
      return 'relayed';
    } finally {
      await relay.close();
    }
  };
  expect(['refused', 'relayed']).toContain(await outcome());
}, 30_000);
