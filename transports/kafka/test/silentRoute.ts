/**
 * A TCP link to the first broker that every connection of the process to its port goes through
 * (net.Socket's connect, as test-support/tcpNoDelay.ts watches it: @platformatic/kafka has no
 * socket factory and connects to the advertised broker itself), and that can go silent: nothing
 * crosses it either way, every connection stays open, also when a client ends its side (its FIN
 * is not answered, as behind a network blackhole: a client that waits for the broker's FIN to
 * close a socket waits for ever). Restores net.Socket's connect at close().
 */
import net from 'node:net';
import { tracingChannel } from 'node:diagnostics_channel';
import type { OutboxMessage, PublishOutcome } from '@ferry/core';
import type { KafkaConnection, KafkaPublisher } from '../src';
import { brokers, waitFor } from './support';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';

/** A TCP link to the broker that every connection to its port goes through, and that can go silent. */
export class SilentRoute {
  private readonly sockets = new Set<net.Socket>();
  private silent = false;
  private down = false;
  private closed = false;
  /** Bytes the clients wrote to the link since it went silent (none reached the broker). */
  dropped = 0;
  /** Connections the link closed as it accepted them, cut (cut()). */
  refused = 0;
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
    // Half-open: a client's FIN is answered only while the link is not silent (pair()).
    const server = net.createServer({ allowHalfOpen: true }, (client) => route!.pair(client));
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

  /**
   * From now on the broker is unreachable: every connection through the link is cut and each new
   * one is closed as soon as it is accepted (a broker down, its host still up).
   */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  /** Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
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
    // Accepted before close() and paired after it: its upstream would never be destroyed (a
    // silent link answers no FIN), a socket left holding the process. Cut: the broker is down.
    if (this.closed || this.down) {
      if (this.down) this.refused += 1;
      client.destroy();
      return;
    }
    this.bypass = true;
    const upstream = net.connect(this.brokerPort, this.host);
    this.bypass = false;
    this.sockets.add(client).add(upstream);
    client.on('data', (data) => {
      if (this.silent) this.dropped += data.length;
      else upstream.write(data);
    });
    upstream.on('data', (data) => this.silent || client.write(data));
    client.on('end', () => this.silent || upstream.end());
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

/**
 * Closes `publisher` (twice, as callers may) on a silent `route` and expects what reviews 100 and
 * 102 hold: close() settles within `withinMs`, the publish of `message` in flight is told at once
 * that it is not sent (retryable or unavailable, never `sent`), and no socket to the route is left.
 */
export async function expectClosedNotSent(
  route: SilentRoute,
  publisher: KafkaPublisher,
  publishing: Promise<readonly PublishOutcome[]>,
  message: OutboxMessage,
  withinMs: number,
): Promise<void> {
  const closed = await outcomeWithin(Promise.all([publisher.close(), publisher.close()]), withinMs);
  expect(closed).toEqual({ value: [undefined, undefined] });
  expect(await outcomeWithin(publishing, 1_000)).toEqual({
    value: [
      // Ended by close(): no attempt spent.
      expect.objectContaining({ id: message.id, status: 'unavailable' }),
    ],
  });
  expect(openSocketsTo(route.port)).toBe(0);
}

/**
 * Starts a consumer (`start`, on `connection`) whose start check's admin client meets a silent
 * `route`: silenced as the admin client is asked for (`connecting`: its connect is unanswered) or
 * once it connected (`connected`: its listing is). Then expects what reviews 102 and 103 hold:
 * close(), twice, settles within `withinMs` and leaves no socket to the route.
 */
export async function expectStartCheckClosed(
  route: SilentRoute,
  connection: KafkaConnection,
  at: 'connecting' | 'connected',
  start: () => { close(): Promise<void> },
  withinMs: number,
): Promise<void> {
  const connectAdmin = connection.driver.admin.bind(connection.driver);
  let silenced = false;
  jest.spyOn(connection.driver, 'admin').mockImplementation(async (signal) => {
    if (at === 'connecting') route.silence();
    const admin = connectAdmin(signal);
    if (at === 'connected') await admin.then(() => route.silence());
    silenced = true;
    return admin;
  });
  const consumer = start();
  await waitFor(
    () => silenced && route.dropped > 0,
    () => `the start check never reached the silent link (${at})`,
  );
  const closed = await outcomeWithin(Promise.all([consumer.close(), consumer.close()]), withinMs);
  expect(closed).toEqual({ value: [undefined, undefined] });
  expect(openSocketsTo(route.port)).toBe(0);
}

/**
 * What a client closed before still does within `ms` from now (reviews 100, 125): the connects
 * (their first argument) any socket of the process makes, and the group heartbeats
 * @platformatic/kafka starts (its diagnostics channel; kafkajs has none).
 */
export async function activityWithin(ms: number): Promise<{ connects: string[]; heartbeats: number }> {
  const opened: string[] = [];
  let heartbeats = 0;
  const heartbeat = tracingChannel('plt:kafka:consumer:heartbeat');
  const ignored = () => undefined;
  const counted = {
    start: () => void (heartbeats += 1),
    end: ignored,
    asyncStart: ignored,
    asyncEnd: ignored,
    error: ignored,
  };
  heartbeat.subscribe(counted);
  const connect = net.Socket.prototype.connect;
  const spy = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (
    this: net.Socket,
    ...args: unknown[]
  ) {
    // With where it came from: a connect after close() names the client that made it.
    const from = (new Error().stack ?? '')
      .split('\n')
      .slice(2)
      .filter((line) => !/node:|silentRoute|jest-mock/.test(line))
      .slice(0, 12)
      .map((line) => line.trim());
    opened.push(`${JSON.stringify(args[0])} ${from.join(' < ')}`);
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    spy.mockRestore();
    heartbeat.unsubscribe(counted);
  }
  return { connects: opened, heartbeats };
}
