/**
 * Review 99: close() of a consumer that joined its group, whose cluster then goes silent (its TCP
 * links stay open, nothing answers). kafkajs's stop waits for the fetch in flight, then for its
 * LeaveGroup, each up to requestTimeoutMs (@platformatic/kafka likewise for its LeaveGroup):
 * a process given 30 s to stop (Kubernetes' SIGTERM) could not. close() settles within its
 * `closeTimeoutMs` (default 10 s), destroys what is left of the client, reports `disconnected`
 * (closed) once and leaves no socket. A chunk accepted before the silence stays accepted and is
 * committed; one whose commit the silence swallowed is read again by the next member and answered
 * as a duplicate (nothing lost). Runs on both clients (platformatic/review99-silentClose).
 *
 * Every broker connection of the process is routed through a link of this file (net.Socket's
 * connect, as test-support/tcpNoDelay.ts watches it): @platformatic/kafka has no socket factory
 * and connects to the advertised broker itself. The shared broker is never touched.
 */
import net from 'node:net';
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness, eventSum } from './consumerHarness';
import { brokers, testConnection, waitFor } from './support';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(120_000);

/** Far beyond the test: a close() that waits for the client's requests to time out hangs here. */
const REQUEST_TIMEOUT_MS = 600_000;
/** The consumer's default closeTimeoutMs (10 s) and room for the test machine. */
const CLOSE_WITHIN_MS = 25_000;

/** A TCP link to the broker that every connection to its port goes through, and that can go silent. */
class SilentRoute {
  private readonly sockets = new Set<net.Socket>();
  private silent = false;
  private bypass = false;
  private readonly spy: jest.SpyInstance;

  private constructor(
    private readonly server: net.Server,
    private readonly host: string,
    private readonly brokerPort: number,
  ) {
    const connect = net.Socket.prototype.connect;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const route = this;
    this.spy = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (
      this: net.Socket,
      ...args: unknown[]
    ) {
      if (!route.bypass) route.redirect(args);
      return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
    });
  }

  static async start(): Promise<SilentRoute> {
    const [host, port] = brokers()[0]!.split(':');
    let route: SilentRoute | null = null;
    const server = net.createServer((client) => route!.pair(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    route = new SilentRoute(server, host!, Number(port));
    return route;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** From now on nothing crosses the link either way; every connection stays open. */
  silence(): void {
    this.silent = true;
  }

  async close(): Promise<void> {
    this.spy.mockRestore();
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** A connect to the broker's port (net.connect's normalized arguments, or options) goes to the link. */
  private redirect(args: unknown[]): void {
    const first = args[0];
    const options = (Array.isArray(first) ? first[0] : first) as { port?: unknown; host?: unknown } | null;
    if (typeof options !== 'object' || options === null || Number(options.port) !== this.brokerPort) return;
    options.port = this.port;
    options.host = '127.0.0.1';
  }

  private pair(client: net.Socket): void {
    this.bypass = true;
    const upstream = net.connect(this.brokerPort, this.host);
    this.bypass = false;
    this.sockets.add(client).add(upstream);
    client.on('data', (data) => this.silent || upstream.write(data));
    upstream.on('data', (data) => this.silent || client.write(data));
    const end = () => {
      if (this.silent) return;
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', end);
      socket.on('close', () => this.sockets.delete(socket));
    }
  }
}

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('close() of a joined consumer whose cluster went silent settles within its bound, reports closed once and leaves no socket; nothing is lost', async () => {
  const topic = await harness.topicPair('r99-silent');
  const record = (id: string) => ({ value: `{"id":"${id}"}`, headers: { [FERRY_HEADERS.messageId]: id } });
  await harness.raw.send({ topic, messages: [record('before')] });
  const route = await SilentRoute.start();
  let groupId = '';
  try {
    const started = await harness.start(topic, 'review99', {
      connection: testConnection({ requestTimeoutMs: REQUEST_TIMEOUT_MS }),
    });
    groupId = started.groupId;
    await harness.waitFullyCommitted(groupId, topic);

    // A chunk being accepted as the cluster goes silent: stored, its commit never answered.
    let silenced = false;
    harness.acceptor.afterCommit = async () => {
      route.silence();
      silenced = true;
    };
    await harness.raw.send({ topic, messages: [record('during')] });
    await waitFor(
      () => silenced,
      () => 'the second record was never accepted',
    );
    harness.acceptor.afterCommit = null;

    const closed = await outcomeWithin(
      Promise.all([started.handle.close(), started.handle.close()]),
      CLOSE_WITHIN_MS,
    );
    expect(closed).toEqual({ value: [undefined, undefined] });
    expect(openSocketsTo(route.port)).toBe(0);
    expect(
      started.events.filter((event) => event.type === 'disconnected' && event.retryInMs === null),
    ).toEqual([expect.objectContaining({ reason: 'closed' })]);
    expect(eventSum(started.events, 'accepted')).toBeGreaterThanOrEqual(1);
  } finally {
    await route.close();
  }

  // The next member of the group reads what was not committed again: a duplicate, nothing lost.
  const duplicatesBefore = harness.acceptor.duplicates;
  const next = await harness.start(topic, 'review99', { groupId });
  await harness.waitFullyCommitted(groupId, topic);
  expect(harness.acceptor.duplicates - duplicatesBefore).toBeLessThanOrEqual(1);
  expect((await harness.acceptor.rows('review99')).map((row) => row.messageId).sort()).toEqual([
    'before',
    'during',
  ]);
  await next.handle.close();
});
