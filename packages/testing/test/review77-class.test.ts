/**
 * Review 77, the rest of each class (review77-wait-helpers, review77-database and
 * review77-conformance-mutants hold the reviewer's examples): every wait and pause of
 * @ferry/testing under legacy fake timers too, WaitTimeoutError's code, recreateDatabase's
 * `through` on another server, a `through` that is the database itself, a reserved-word name
 * created (quoted DDL), and raw (publishRaw) non-ASCII bodies checked by the conformance suite.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as realSetTimeout } from 'node:timers';
import { FERRY_HEADERS, FerryError, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import {
  InMemoryBroker,
  InboxDrainTimeoutError,
  InboxRecordWaitTimeoutError,
  WaitTimeoutError,
  attachInMemoryConsumer,
  dropDatabase,
  drainInbox,
  pause,
  recreateDatabase,
  waitForInboxRecord,
  waitUntil,
} from '@ferry/testing';
import type { TransportConformanceOptions } from '@ferry/testing/conformance';
import { adminQuery, serverUrl } from '../../../test-support/database';
import { settledOrHung as settledWithin } from './support/settledOrHung';
import { inMemoryConformance } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const HUNG_AFTER_MS = 5_000;

function settledOrHung(waiting: Promise<unknown>): Promise<unknown> {
  return settledWithin(waiting, HUNG_AFTER_MS);
}

describe.each([
  ['legacy', { legacyFakeTimers: true }],
  ['modern', { legacyFakeTimers: false }],
] as const)('review 77: @ferry/testing under jest.useFakeTimers() (%s)', (_mode, config) => {
  beforeEach(() => jest.useFakeTimers(config));
  afterEach(() => jest.useRealTimers());

  test('waitUntil, waitForInboxRecord and drainInbox end at their deadlines', async () => {
    const pending = { id: 'r-1', status: 'PENDING' };
    const scope = { get: async () => pending } as unknown as Parameters<typeof waitForInboxRecord>[0];
    const outcomes = await Promise.all([
      settledOrHung(waitUntil('x', () => false, { timeoutMs: 200 })),
      settledOrHung(waitForInboxRecord(scope, 'r-1', { timeoutMs: 200 })),
      settledOrHung(drainInbox({ runOnce: () => new Promise<never>(() => undefined) }, { timeoutMs: 200 })),
    ]);
    expect(outcomes[0]).toBeInstanceOf(WaitTimeoutError);
    expect(outcomes[1]).toBeInstanceOf(InboxRecordWaitTimeoutError);
    expect(outcomes[2]).toBeInstanceOf(InboxDrainTimeoutError);
  });

  test('pause(ms) ends after ms of real time', async () => {
    expect(await settledOrHung(pause(20))).toEqual({ resolved: undefined });
  });

  test("the in-memory consumer's look for a missing queue runs on real time; retryLater's delay follows the fake clock", async () => {
    const broker = new InMemoryBroker();
    const offered: string[] = [];
    const inbox: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      async acceptMany(inputs) {
        offered.push(...inputs.map((input) => input.messageId));
        // The first offer fails for its batch: the delivery goes round a retryLater delay.
        if (offered.length === 1) throw new FerryError('FERRY_DATABASE_ERROR', 'db down');
        return inputs.map((input) => ({ kind: 'accepted' as const, id: input.messageId }));
      },
    };
    const consumer = attachInMemoryConsumer(inbox, {
      broker,
      queue: 'q',
      consumer: 'c',
      reconnectBackoff: { initialMs: 50, maxMs: 50 },
      retryBackoff: { initialMs: 50, maxMs: 50 },
    });
    try {
      // Declared after the consumer's first look: its next look (reconnectBackoff) finds it.
      await new Promise((resolve) => realSetTimeout(resolve, 30));
      broker.declareQueue('q');
      broker.send('q', { body: Buffer.from('{}'), headers: { [FERRY_HEADERS.messageId]: 'm-1' } });
      const seenTwice = settledOrHung(
        new Promise<void>((resolve) => {
          const look = (): void => {
            if (offered.length >= 2) resolve();
            else {
              // The broker's retry tier TTL (retryLater) is the fake clock's, on purpose.
              jest.advanceTimersByTime(10);
              realSetTimeout(look, 10);
            }
          };
          look();
        }),
      );
      expect(await seenTwice).toEqual({ resolved: undefined });
    } finally {
      await settledOrHung(consumer.close());
    }
  });
});

describe('review 77: WaitTimeoutError', () => {
  test("has code FERRY_TIMEOUT, as the inbox waits' timeout errors", async () => {
    const error = await waitUntil('x', () => false, { timeoutMs: 10 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'FERRY_TIMEOUT', what: 'x' });
  });
});

function onServer(database: string, port?: string): string {
  const url = new URL(serverUrl());
  if (port !== undefined) url.port = port;
  url.pathname = `/${database}`;
  return url.toString();
}

describe('review 77: recreateDatabase / dropDatabase, the rest of the class', () => {
  const scratch = `review77_class_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    await adminQuery(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
    await adminQuery(`DROP DATABASE IF EXISTS "user" WITH (FORCE)`);
  });

  test('recreateDatabase refuses a `through` URL on another server, naming through, and creates nothing there', async () => {
    const error = await recreateDatabase(onServer(scratch, '1'), { through: onServer('postgres') }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', message: expect.stringMatching(/through/) });
    await expect(dropDatabase(onServer(scratch))).resolves.toBeUndefined();
  });

  test('a `through` on the same server with another spelling of its default port is taken', async () => {
    const url = new URL(serverUrl());
    const through = new URL(onServer('postgres'));
    through.port = url.port === '' ? '5432' : url.port;
    await expect(dropDatabase(onServer(scratch), { through: through.toString() })).resolves.toBeUndefined();
  });

  test('dropping the database the maintenance connection is on is a FERRY_CONFIG_INVALID refusal', async () => {
    for (const [url, through] of [
      [onServer('postgres'), undefined],
      [onServer(scratch), scratch],
      [onServer(scratch), onServer(scratch)],
    ] as const) {
      const error = await dropDatabase(url, through === undefined ? {} : { through }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID' });
    }
  });

  test('a database named like a reserved word (`user`) is created, migrated and dropped', async () => {
    await expect(recreateDatabase(onServer('user'))).resolves.toBeUndefined();
    await expect(dropDatabase(onServer('user'))).resolves.toBeUndefined();
  }, 60_000);

  test('a name PostgreSQL would truncate (over 63 bytes) is refused naming url', async () => {
    const error = await dropDatabase(onServer('a'.repeat(64))).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', message: expect.stringMatching(/url/) });
  });
});

describe('review 77: the conformance suite checks raw non-ASCII bodies', () => {
  test('a consumer that decodes raw-published bodies as latin1 fails the suite', async () => {
    const readAsLatin1 = (input: InboxAcceptInput): InboxAcceptInput => {
      if (!input.messageId.startsWith('conformance-')) return input;
      const bytes = Buffer.from(JSON.stringify(input.payload), 'utf8');
      return { ...input, payload: JSON.parse(bytes.toString('latin1')) as InboxAcceptInput['payload'] };
    };
    const options: TransportConformanceOptions = inMemoryConformance({
      name: 'in-memory (raw latin1)',
      timeoutMs: 2_000,
      inputs: readAsLatin1,
    });
    expect(await conformanceFailures(options)).not.toEqual([]);
  }, 180_000);
});
