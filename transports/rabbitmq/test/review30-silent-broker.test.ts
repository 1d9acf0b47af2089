/**
 * Review 30 (hostile review: waits without a deadline against a broker that goes silent).
 *
 * The project's rule: "Partial failure is part of the spec: a call that hangs, a connection that
 * goes silent, a process killed between two statements. Every wait has a deadline." The README:
 * "Every close (the connection's, the publisher's, the consumer's) waits for each of the broker's
 * answers (basic.cancel, channel.close, connection.close) at most 2 s (`CLOSE_ANSWER_MS`, less when
 * the component's `confirmTimeoutMs` or `connectTimeoutMs` is shorter), then goes on; a connection
 * whose close is not answered has its socket destroyed", and for the consumer's `disconnected`
 * event: "a connect or channel attempt failed (`retryInMs`: the `reconnectBackoff` wait)".
 *
 * Defect 1 (RabbitConnection.close() during a connect attempt): when close() comes while a connect
 * attempt is in flight and the handshake then completes, the connection loop closes the new
 * connection with amqplib's bare `model.close()` (connection.ts, run(): `if (this.closed) await
 * model.close()`), outside the bounded closeModel(), and without an 'error' listener on it. A
 * broker (or network) that goes silent right then makes close() wait for a close-ok that never
 * comes; when amqplib's heartbeat check gives up (20-30 s) it emits 'error' first, which nobody
 * listens to, so amqplib throws (an uncaught exception, every heartbeat interval) and never marks
 * the connection closed: close() never settles. An application shutting down during a broker
 * outage hangs until its process manager kills it.
 *
 * Defect 1b (same place): that connection failing in any way (the broker dropping it, the socket
 * ending, the heartbeat timing out) emits an 'error' event with no listener: Node throws it as an
 * uncaught exception, which ends a process that has no uncaughtException handler.
 *
 * Defect 2 (the consumer's re-attach): after its channel closed, the consumer re-attaches on the
 * same connection with createConfirmChannel / declare / prefetch / consume (consumer.ts,
 * openChannel), none of them bounded. A connection that stays up (heartbeats flowing, as on a
 * node under a resource alarm that blocks a connection which published a dead-letter or retry
 * copy) but does not answer the channel.open leaves the consumer not consuming for as long as the
 * broker withholds the answer, with no deadline, no further attempt and no event: the observer's
 * last word is `disconnected` with `retryInMs: 0` ("re-attached at once"), so monitoring sees a
 * consumer that claims to be re-attaching and never learns that it is not.
 *
 * The broker is made silent only for the connections through a TCP proxy of this file (a frame-
 * aware proxy in front of the shared 127.0.0.1:5672): the shared broker gets no alarm, no
 * watermark and is never stopped.
 */
import net from 'node:net';
import amqp from 'amqplib';
import {
  RabbitConnection,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import {
  AMQP_URL,
  consumerCount,
  openTestBroker,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';

jest.setTimeout(90_000);

const FRAME_HEARTBEAT = 8;
const FRAME_METHOD = 1;
const FRAME_END = 0xce;

/** Splits an AMQP 0-9-1 byte stream into whole frames (the client's protocol header first). */
class FrameReader {
  private pending = Buffer.alloc(0);
  constructor(private protocolHeader: boolean) {}

  push(chunk: Buffer): Buffer[] {
    this.pending = Buffer.concat([this.pending, chunk]);
    const frames: Buffer[] = [];
    for (;;) {
      if (this.protocolHeader) {
        if (this.pending.length < 8) return frames;
        frames.push(this.pending.subarray(0, 8));
        this.pending = this.pending.subarray(8);
        this.protocolHeader = false;
        continue;
      }
      if (this.pending.length < 7) return frames;
      const size = this.pending.readUInt32BE(3);
      if (this.pending.length < 8 + size) return frames;
      if (this.pending[7 + size] !== FRAME_END) throw new Error('proxy lost AMQP framing');
      frames.push(this.pending.subarray(0, 8 + size));
      this.pending = this.pending.subarray(8 + size);
    }
  }
}

function isMethod(frame: Buffer, classId: number, methodId: number): boolean {
  return (
    frame.length >= 11 &&
    frame[0] === FRAME_METHOD &&
    frame.readUInt16BE(7) === classId &&
    frame.readUInt16BE(9) === methodId
  );
}

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
  /** Client frames held back (not heartbeats) while `withholding`. */
  readonly heldUp: Buffer[];
  /** Broker frames held back while `holdingDown`. */
  readonly heldDown: Buffer[];
  withholding: boolean;
  holdingDown: boolean;
  silent: boolean;
}

/**
 * A proxy to RabbitMQ that understands frames, so that it can stop a broker from answering without
 * breaking the AMQP stream:
 * - `withholdFromNextChannelOpen()`: from the next channel.open a client sends, its frames are held
 *   back (never reach the broker) except heartbeats, which flow both ways, so the connection stays
 *   up; the broker's frames still reach the client. `release()` delivers the held frames in order.
 *   What a node blocking a connection (resource alarm) looks like to the client.
 * - `holdAnswerToConnectionOpen()`: the broker's frames after the client's connection.open (its
 *   open-ok) are held; `deliverHeldThenGoSilent()` hands them over and then drops every byte both
 *   ways, keeping both sockets open (a network that went silent right after the handshake).
 */
class FrameProxy {
  private readonly pairs = new Set<Pair>();
  private withholdNextOpen = false;
  private holdOpenOk = false;
  withheldChannelOpens = 0;

  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<FrameProxy> {
    const target = new URL(AMQP_URL);
    const server = net.createServer({ allowHalfOpen: true });
    const proxy = new FrameProxy(server);
    server.on('connection', (client) =>
      proxy.onConnection(client, target.hostname, Number(target.port || 5672)),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  url(): string {
    const parsed = new URL(AMQP_URL);
    parsed.hostname = '127.0.0.1';
    parsed.port = String((this.server.address() as net.AddressInfo).port);
    return parsed.toString();
  }

  withholdFromNextChannelOpen(): void {
    this.withholdNextOpen = true;
  }

  holdAnswerToConnectionOpen(): void {
    this.holdOpenOk = true;
  }

  get heldDownFrames(): number {
    let total = 0;
    for (const pair of this.pairs) total += pair.heldDown.length;
    return total;
  }

  release(): void {
    this.withholdNextOpen = false;
    for (const pair of this.pairs) {
      pair.withholding = false;
      for (const frame of pair.heldUp.splice(0)) pair.upstream.write(frame);
    }
  }

  deliverHeldThenGoSilent(): void {
    this.holdOpenOk = false;
    for (const pair of this.pairs) {
      for (const frame of pair.heldDown.splice(0)) pair.client.write(frame);
      pair.holdingDown = false;
      pair.silent = true;
    }
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(client: net.Socket, host: string, port: number): void {
    client.pause();
    const upstream = net.connect(port, host, () => client.resume());
    const pair: Pair = {
      client,
      upstream,
      heldUp: [],
      heldDown: [],
      withholding: false,
      holdingDown: false,
      silent: false,
    };
    this.pairs.add(pair);
    const up = new FrameReader(true);
    const down = new FrameReader(false);
    client.on('data', (chunk: Buffer) => {
      for (const frame of up.push(chunk)) {
        if (pair.silent) continue;
        if (!pair.withholding && this.withholdNextOpen && isMethod(frame, 20, 10)) {
          this.withholdNextOpen = false;
          pair.withholding = true;
          this.withheldChannelOpens += 1;
        }
        if (this.holdOpenOk && isMethod(frame, 10, 40)) pair.holdingDown = true;
        if (pair.withholding && frame[0] !== FRAME_HEARTBEAT) pair.heldUp.push(frame);
        else upstream.write(frame);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      for (const frame of down.push(chunk)) {
        if (pair.silent) continue;
        if (pair.holdingDown) pair.heldDown.push(frame);
        else client.write(frame);
      }
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    // A silent pair keeps the client's socket open whatever the broker does (no FIN, no RST).
    upstream.on('close', () => void (pair.silent || client.destroy()));
    client.on('close', () => void (pair.silent || upstream.destroy()));
  }
}

/** 'settled' when `work` settles within `ms`, else 'still waiting'. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<'settled' | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'still waiting'>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => 'settled' as const,
        () => 'settled' as const,
      ),
      gaveUp,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const silentLogger = pino({ level: 'silent' });
let proxy: FrameProxy;

beforeEach(async () => {
  proxy = await FrameProxy.start();
});

afterEach(async () => {
  await proxy.close();
});

/** Exceptions no listener took while `work` runs (an 'error' event nobody listens to crashes the process). */
async function uncaughtDuring(work: () => Promise<void>): Promise<unknown[]> {
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => void uncaught.push(error);
  process.prependListener('uncaughtException', onUncaught);
  try {
    await work();
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
  return uncaught;
}

describe('RabbitConnection.close() during a connect attempt', () => {
  const connectTimeoutMs = 2_000;

  /** close() called while the handshake is in flight; the broker's open-ok arrives after it, then silence. */
  async function closeDuringHandshakeThenSilence(): Promise<{ closing: Promise<void> }> {
    const connection = new RabbitConnection({
      url: proxy.url(),
      connectionName: uniqueName('review30-close'),
      connectTimeoutMs,
      reconnectBackoff: { initialMs: 50, maxMs: 100 },
      logger: silentLogger,
    });
    proxy.holdAnswerToConnectionOpen();
    void connection.connect().catch(() => undefined);
    // The handshake is in flight: the broker answered connection.open, the client has not seen it.
    await waitFor('the broker answered connection.open', () => (proxy.heldDownFrames > 0 ? true : undefined));
    const closing = connection.close();
    // The open-ok arrives after close(), then the network goes silent (no byte either way).
    proxy.deliverHeldThenGoSilent();
    return { closing };
  }

  it('settles within the close bound when the broker goes silent right after answering connection.open', async () => {
    // Only to end the test cleanly: the connections amqplib made, so that an 'error' listener can
    // be added before the proxy drops them (the next case is about that error).
    const made: amqp.ChannelModel[] = [];
    const connect = amqp.connect;
    const spy = jest
      .spyOn(amqp, 'connect')
      .mockImplementation((...args: Parameters<typeof amqp.connect>) =>
        connect(...args).then((model) => (made.push(model), model)),
      );
    try {
      const { closing } = await closeDuringHandshakeThenSilence();
      // Promised: the connect attempt ends within connectTimeoutMs (here it already completed) and
      // the broker's close-ok is waited for at most min(2 s, connectTimeoutMs). Given three times that.
      const outcome = await settlesWithin(closing, 3 * (connectTimeoutMs + 2_000));
      // Actual: 'still waiting': amqplib's own model.close() waits for the close-ok, and when its
      // heartbeat check gives up (20-30 s) the 'error' it emits first has no listener and throws,
      // so the connection is never marked closed: close() never settles.
      expect(outcome).toBe('settled');
    } finally {
      spy.mockRestore();
      for (const model of made) model.on('error', () => undefined);
      await proxy.close();
    }
  });

  it('does not crash the process when that connection then fails (an error event nobody listens to)', async () => {
    const { closing } = await closeDuringHandshakeThenSilence();
    const uncaught = await uncaughtDuring(async () => {
      // The connection fails under the pending close: the broker side goes away (as it does when
      // the broker, or amqplib's heartbeat check, gives up on the silent connection).
      await proxy.close();
      await settlesWithin(closing, 2_000);
    });
    // Actual: [Error: Unhandled error. (Error: Unexpected close)]: the connection closed after
    // close() never had an 'error' listener (connection.ts run(): `if (this.closed) await
    // model.close()`), so amqplib's 'error' event is thrown as an uncaught exception, which ends
    // a Node process that has no uncaughtException handler (the same with 'Heartbeat timeout').
    expect(uncaught.map(String)).toEqual([]);
  });
});

describe('the consumer re-attaching on a connection that does not answer', () => {
  let database: TestDatabase;
  let broker: TestBroker;
  let acceptor: PgTestAcceptor;
  let queue: string;
  let consumer: RabbitConsumer | null = null;

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    broker = await openTestBroker();
  });

  afterAll(async () => {
    await broker?.close();
    await database?.drop();
  });

  beforeEach(async () => {
    await database.db.execute('DROP TABLE IF EXISTS test_inbox');
    acceptor = await PgTestAcceptor.create(database.db);
    queue = uniqueName('review30_work');
  });

  afterEach(async () => {
    proxy.release();
    await consumer?.close();
    await deleteWorkQueue(broker.channel, { queue, retryTiersMs: consumer?.names.retryTiersMs ?? [] });
    consumer = null;
  });

  it('reports a failed channel attempt (and tries again) instead of waiting for the channel.open answer for ever', async () => {
    const events: TransportConsumerEvent[] = [];
    const timeouts = { connectTimeoutMs: 1_000, confirmTimeoutMs: 1_000 };
    consumer = attachRabbitConsumer(acceptor, {
      connection: {
        url: proxy.url(),
        connectionName: uniqueName('review30-consumer'),
        connectTimeoutMs: timeouts.connectTimeoutMs,
        reconnectBackoff: { initialMs: 50, maxMs: 200, jitter: 'none' },
        logger: silentLogger,
      },
      queue,
      consumer: 'billing',
      confirmTimeoutMs: timeouts.confirmTimeoutMs,
      retryBackoff: { initialMs: 100, maxMs: 200 },
      logger: silentLogger,
      observer: (event) => events.push(event),
    });
    await consumer.ready({ timeoutMs: 20_000 });
    expect(await consumerCount(queue)).toBe(1);

    // The broker cancels the consumer (its work queue deleted): the consumer closes its channel
    // and re-attaches on the same connection, whose next channel.open the broker never answers
    // (heartbeats keep flowing both ways: the connection is up, as on a node blocking it).
    proxy.withholdFromNextChannelOpen();
    await broker.channel.deleteQueue(queue);
    await waitFor('the re-attach sent its channel.open', () =>
      proxy.withheldChannelOpens > 0 ? true : undefined,
    );
    const from = events.length;

    // Every wait has a deadline: by three times the longest timeout the consumer was given, the
    // channel attempt has failed, and it says so (`disconnected` with the backoff before the next
    // attempt), naming why.
    const failedAttempt = await waitFor(
      'a disconnected event for the unanswered channel attempt',
      () => events.slice(from).find((e) => e.type === 'disconnected'),
      3 * Math.max(timeouts.connectTimeoutMs, timeouts.confirmTimeoutMs) + 2_000,
    ).catch(() => undefined);
    // Actual: no event at all after the channel closed (the last one is `disconnected` with
    // retryInMs 0, "re-attached at once"); the consumer waits for the answer for ever.
    expect({
      eventsSinceTheChannelOpen: events.slice(from).map((e) => e.type),
      failedAttempt: failedAttempt === undefined ? 'none' : 'reported',
    }).toEqual({
      eventsSinceTheChannelOpen: expect.arrayContaining(['disconnected']),
      failedAttempt: 'reported',
    });
  });
});
