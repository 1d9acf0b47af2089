import { MultipleErrors, ProtocolError, consumerFetchesChannel } from '@platformatic/kafka';
import { retryDelayUntilClosed } from '../src/client/platformatic';
import { COORDINATOR_NOT_READY, PlatformaticConsumer } from '../src/client/platformaticConsumer';
import type { PlatformaticBase, PlatformaticKafka } from '../src/client/platformaticTypes';
import type { DriverConsumerOptions, SessionHandlers } from '../src/client/types';

/** The shape consume() rejected with on a fresh broker whose group coordinator was still loading. */
const joinFailed = (apiId: string) =>
  new MultipleErrors('joinGroup failed 4 times.', [
    new MultipleErrors('Received response with error while executing API JoinGroup(v9)', [
      new ProtocolError(apiId),
    ]),
  ]);

/** A stand-in for the client module whose consume() rejects (the join is what is under test). */
function failingClient(error: Error): { kafka: PlatformaticKafka; closed: () => number } {
  let closes = 0;
  class Consumer {
    on(): this {
      return this;
    }
    consume(): Promise<never> {
      return Promise.reject(error);
    }
    async close(): Promise<void> {
      closes += 1;
    }
  }
  return {
    kafka: { Consumer, consumerFetchesChannel } as unknown as PlatformaticKafka,
    closed: () => closes,
  };
}

const base: PlatformaticBase = {
  clientId: 'test',
  bootstrapBrokers: ['127.0.0.1:9092'],
  connectTimeout: 1000,
  requestTimeout: 1000,
  timeout: 1000,
  retryDelay: retryDelayUntilClosed(undefined),
};
const options: DriverConsumerOptions = {
  groupId: 'group',
  topics: ['topic'],
  fromBeginning: true,
  sessionTimeoutMs: 10_000,
  heartbeatIntervalMs: 1000,
  rebalanceTimeoutMs: 10_000,
  maxWaitTimeMs: 500,
  metadataMaxAgeMs: 30_000,
  partitionsConsumedConcurrently: 1,
  restartOnFailure: () => true,
  signal: new AbortController().signal,
};

function recordingHandlers(): { handlers: SessionHandlers; crashes: [unknown, number | null][] } {
  const crashes: [unknown, number | null][] = [];
  return {
    crashes,
    handlers: {
      eachBatch: async () => undefined,
      onJoin: () => undefined,
      onCrash: (error, restartInMs) => void crashes.push([error, restartInMs]),
    },
  };
}

describe('PlatformaticConsumer joining its group', () => {
  test.each([...COORDINATOR_NOT_READY])(
    'a join that failed on %s crashes into a restart instead of failing the session start',
    async (apiId) => {
      const error = joinFailed(apiId);
      const { kafka, closed } = failingClient(error);
      const { handlers, crashes } = recordingHandlers();
      const consumer = new PlatformaticConsumer(kafka, base, options);
      await expect(consumer.run(handlers)).resolves.toBeUndefined();
      expect(crashes).toEqual([[error, null]]);
      await consumer.disconnect();
      expect(closed()).toBe(1);
    },
  );

  test('any other join failure fails the session start, as before', async () => {
    const error = joinFailed('GROUP_AUTHORIZATION_FAILED');
    const { kafka } = failingClient(error);
    const { handlers, crashes } = recordingHandlers();
    await expect(new PlatformaticConsumer(kafka, base, options).run(handlers)).rejects.toBe(error);
    expect(crashes).toEqual([]);
  });
});

describe("the client's wait before it retries an operation", () => {
  // An operation that fails after close() (its connection closed under it) schedules a retry the
  // client's close() no longer cancels; at 0 ms it ends at once instead of keeping close() of a
  // consumer closed mid-join waiting for it (about 5 s with the client's default 1 s, measured).
  const rest = ['op', 1, 3, new Error('failed')] as const;

  test('is 0 once the client is closed, whatever was configured', () => {
    expect(retryDelayUntilClosed(250)({ closed: true }, ...rest)).toBe(0);
    expect(retryDelayUntilClosed(() => 250)({ closed: true }, ...rest)).toBe(0);
  });

  test("is the configured wait, or the client's default 1,000 ms, while it is open", () => {
    expect(retryDelayUntilClosed(250)({ closed: false }, ...rest)).toBe(250);
    expect(
      retryDelayUntilClosed((_client: object, _op: string, attempt: number) => attempt * 7)(
        { closed: false },
        ...rest,
      ),
    ).toBe(7);
    expect(retryDelayUntilClosed(undefined)({ closed: false }, ...rest)).toBe(1_000);
  });
});
