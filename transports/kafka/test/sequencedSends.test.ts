/** SequencedSends over fake client producers (pure logic; the real brokers: lostAnswer and concurrentPublish). */
import { REPLACED_DISCONNECT_MS, SequencedSends } from '../src/client/sequencedSends';
import type { DriverProducer, TopicRecords } from '../src/client/types';

interface FakeProducer extends DriverProducer {
  readonly id: number;
  readonly log: string[];
  fail: boolean;
  /** disconnect() never settles (a socket close hanging on a silent network). */
  hangs: boolean;
  dropConnection(): void;
}

/** `connect`: how producer `id` connects (at once when absent). */
function fakes(connect: (id: number) => Promise<void> = () => Promise.resolve()) {
  const made: FakeProducer[] = [];
  const log: string[] = [];
  const pending: (() => void)[] = [];
  const create = (): DriverProducer => {
    const id = made.length + 1;
    const listeners: (() => void)[] = [];
    const producer: FakeProducer = {
      id,
      log,
      fail: false,
      hangs: false,
      connect: () => {
        log.push(`${id} connect`);
        return connect(id);
      },
      disconnect: () => {
        log.push(`${id} disconnect`);
        for (const listener of listeners) listener();
        return producer.hangs ? new Promise<void>(() => undefined) : Promise.resolve();
      },
      destroy: () => {
        log.push(`${id} destroy`);
        return Promise.resolve();
      },
      onDisconnect: (listener) => void listeners.push(listener),
      send: (batches: readonly TopicRecords[]) => {
        const name = batches[0]!.topic;
        log.push(`${id} start ${name}`);
        return new Promise<void>((resolve, reject) => {
          pending.push(() => {
            log.push(`${id} end ${name}`);
            if (producer.fail) reject(new Error(`${name} failed`));
            else resolve();
          });
        });
      },
      dropConnection: () => {
        for (const listener of listeners) listener();
      },
    };
    made.push(producer);
    return producer;
  };
  /** Settles the oldest send in flight, after the microtasks that start the next ones. */
  const settleNext = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { made, log, create, settleNext };
}

const batch = (topic: string): TopicRecords[] => [{ topic, records: [] }];

/** Send 'a' fails on the first producer (settled). */
async function failOne(
  sends: SequencedSends,
  { made, settleNext }: Pick<ReturnType<typeof fakes>, 'made' | 'settleNext'>,
): Promise<void> {
  made[0]!.fail = true;
  const failed = sends.send(batch('a')).catch(() => undefined);
  await settleNext();
  await failed;
}

/** Send 'a' fails on the first producer, then send 'b' goes out; both settled. */
async function failThenSend(
  sends: SequencedSends,
  { made, settleNext }: Pick<ReturnType<typeof fakes>, 'made' | 'settleNext'>,
): Promise<void> {
  made[0]!.fail = true;
  const failed = sends.send(batch('a')).catch(() => undefined);
  const next = sends.send(batch('b'));
  await settleNext();
  await failed;
  await settleNext();
  await next;
}

describe('SequencedSends', () => {
  test('starts a send only once the one before it settled, in the order they were asked for', async () => {
    const { log, create, settleNext } = fakes();
    const sends = new SequencedSends(create);
    const all = Promise.all([sends.send(batch('a')), sends.send(batch('b')), sends.send(batch('c'))]);
    await settleNext();
    await settleNext();
    await settleNext();
    await all;
    expect(log).toEqual(['1 start a', '1 end a', '1 start b', '1 end b', '1 start c', '1 end c']);
  });

  test('after a failed send, sends the next one on a new producer, connected first; the old one is disconnected', async () => {
    const { made, log, create, settleNext } = fakes();
    const sends = new SequencedSends(create);
    made[0]!.fail = true;
    const failed = sends.send(batch('a')).catch((error: Error) => error.message);
    const next = sends.send(batch('b'));
    await settleNext();
    expect(await failed).toBe('a failed');
    await settleNext();
    await next;
    expect(log).toEqual(['1 start a', '1 end a', '1 disconnect', '2 connect', '2 start b', '2 end b']);
    expect(made).toHaveLength(2);
  });

  test('a failed send does not stop the ones queued behind it', async () => {
    const { made, create, settleNext } = fakes();
    const sends = new SequencedSends(create);
    made[0]!.fail = true;
    const outcomes = [sends.send(batch('a')), sends.send(batch('b'))].map((send) =>
      send.then(
        () => 'sent',
        () => 'failed',
      ),
    );
    await settleNext();
    await settleNext();
    expect(await Promise.all(outcomes)).toEqual(['failed', 'sent']);
  });

  test('never hands the client a send given up while it waited its turn, and keeps the producer', async () => {
    const { made, log, create, settleNext } = fakes();
    const sends = new SequencedSends(create);
    const givenUp = new AbortController();
    const first = sends.send(batch('a'));
    const queued = sends.send(batch('b'), { givenUp: givenUp.signal, handed: () => undefined });
    const next = sends.send(batch('c'));
    givenUp.abort(new Error('publish aborted'));
    await settleNext();
    expect(log).toEqual(['1 start a', '1 end a', '1 start c']);
    await settleNext();
    await Promise.all([first, next]);
    await expect(queued).rejects.toThrow('the send was given up before it reached the Kafka client');
    expect(made).toHaveLength(1);
  });

  test('never hands the client a send given up while a new producer took over for it', async () => {
    const { made, log, create, settleNext } = fakes();
    const givenUp = new AbortController();
    const sends = new SequencedSends(create, () => givenUp.abort(new Error('confirm timeout')));
    made[0]!.fail = true;
    const failed = sends.send(batch('a')).catch(() => undefined);
    const queued = sends.send(batch('b'), { givenUp: givenUp.signal, handed: () => undefined });
    const next = sends.send(batch('c'));
    await settleNext();
    expect(log).toEqual(['1 start a', '1 end a', '1 disconnect', '2 connect', '2 start c']);
    await settleNext();
    await Promise.all([failed, next]);
    await expect(queued).rejects.toThrow('the send was given up before it reached the Kafka client');
  });

  test("tells its listeners of the current producer's disconnects only, not of one it replaced", async () => {
    const { made, create, settleNext } = fakes();
    const sends = new SequencedSends(create);
    let disconnects = 0;
    sends.onDisconnect(() => void (disconnects += 1));
    await failThenSend(sends, { made, settleNext });
    expect(disconnects).toBe(0); // producer 1 was disconnected by the replacement
    made[0]!.dropConnection();
    expect(disconnects).toBe(0);
    made[1]!.dropConnection();
    expect(disconnects).toBe(1);
  });

  test('once disconnected, sends fail at once; the producer that replaced a failed one is disconnected too', async () => {
    const { made, log, create, settleNext } = fakes();
    const sends = new SequencedSends(create);
    await failOne(sends, { made, settleNext });
    await sends.ready();
    await sends.disconnect();
    await expect(sends.send(batch('b'))).rejects.toThrow('the Kafka producer is closed');
    expect(made).toHaveLength(2);
    expect(log).toEqual(['1 start a', '1 end a', '1 disconnect', '2 connect', '2 disconnect']);
  });

  test('replaces a producer as its send fails: ready() settles once the new one is connected, before any next send, and is null otherwise', async () => {
    let connected!: () => void;
    const { made, log, create, settleNext } = fakes((id) =>
      id === 1 ? Promise.resolve() : new Promise<void>((resolve) => (connected = resolve)),
    );
    const sends = new SequencedSends(create);
    expect(sends.ready()).toBeNull(); // no send failed: nothing to wait for
    await failOne(sends, { made, settleNext });
    let ready = false;
    void sends.ready()!.then(() => (ready = true));
    await settleNext();
    expect(log).toEqual(['1 start a', '1 end a', '1 disconnect', '2 connect']);
    expect(ready).toBe(false);
    connected();
    await settleNext();
    expect(ready).toBe(true);
    expect(sends.ready()).toBeNull(); // settled: nothing more to wait for
    const next = sends.send(batch('b'));
    await settleNext();
    await next;
    expect(log.slice(4)).toEqual(['2 start b', '2 end b']); // connected once, by the replacement
  });

  test('a replacement whose connect fails leaves the connect to the next send; ready() settles all the same', async () => {
    let tries = 0;
    const { made, log, create, settleNext } = fakes((id) =>
      id === 2 && ++tries === 1 ? Promise.reject(new Error('broker unreachable')) : Promise.resolve(),
    );
    const sends = new SequencedSends(create);
    await failOne(sends, { made, settleNext });
    await sends.ready();
    const next = sends.send(batch('b'));
    await settleNext();
    await next;
    expect(log).toEqual([
      '1 start a',
      '1 end a',
      '1 disconnect',
      '2 connect',
      '2 connect',
      '2 start b',
      '2 end b',
    ]);
  });

  test('disconnects a replacement that connected after the producer was closed', async () => {
    let connected!: () => void;
    const { made, log, create, settleNext } = fakes((id) =>
      id === 1 ? Promise.resolve() : new Promise<void>((resolve) => (connected = resolve)),
    );
    const sends = new SequencedSends(create);
    await failOne(sends, { made, settleNext });
    await sends.disconnect();
    connected();
    await sends.ready();
    expect(log).toEqual([
      '1 start a',
      '1 end a',
      '1 disconnect',
      '2 connect',
      '2 disconnect',
      '2 disconnect',
    ]);
  });

  test('tells its owner when a new producer takes over, with the failure that retired the old one', async () => {
    const { made, create, settleNext } = fakes();
    const causes: unknown[] = [];
    const sends = new SequencedSends(create, (cause) => causes.push(cause));
    await failThenSend(sends, { made, settleNext });
    expect(causes.map((cause) => (cause as Error).message)).toEqual(['a failed']);
  });

  test('does not let a replaced producer whose disconnect hangs hold the next send for longer than its bound', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { made, log, create, settleNext } = fakes();
      const sends = new SequencedSends(create);
      made[0]!.fail = true;
      made[0]!.hangs = true;
      const failed = sends.send(batch('a')).catch(() => undefined);
      const next = sends.send(batch('b'));
      await settleNext();
      await failed;
      expect(log).not.toContain('2 start b');
      jest.advanceTimersByTime(REPLACED_DISCONNECT_MS);
      await settleNext();
      expect(log.slice(-3)).toEqual(['2 connect', '2 start b', '2 end b']);
      // Its sockets are not left open for as long as its disconnect hangs.
      expect(log).toContain('1 destroy');
      await next;
    } finally {
      jest.useRealTimers();
    }
  });
});
