import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Logger } from '@ferry/core';
import { KafkaConnection, type KafkaClientName, type KafkaLogLevel } from '../src';
import { brokers, silentLogger } from './support';

/** How a ShapedLink slows the traffic between kafkajs and the first broker. */
export interface LinkShape {
  /** Each of the broker's answers reaches the client this many ms late (in order): a slow cluster. */
  readonly answerDelayMs?: number;
  /** At most this many bytes go to the broker per 100 ms (a slow uplink); unlimited when absent. */
  readonly upstreamBytesPerTick?: number;
}

/**
 * A TCP link to the first broker that delays its answers, throttles what is sent to it or goes
 * silent, and Kafka connections through it: kafkajs's every broker socket (it lets the
 * application open them, `socketFactory`), @platformatic/kafka's bootstrap broker (its connects).
 */
export class ShapedLink {
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Per throttled connection: the bytes it holds back for the broker (upstreamBytesPerTick). */
  private readonly queued = new Map<Socket, () => number>();
  private silenceArmed = false;
  /** True once the link carries nothing either way (silenceFromNextConnection). */
  silent = false;
  /** Each of the broker's answers reaches the client this many ms late; may change at any time. */
  answerDelayMs: number;
  /** While true, connections are cut and new ones dropped (setDown). */
  private down = false;
  /** Connections the link was asked for so far, dropped ones (setDown) too. */
  connectionsSeen = 0;

  private readonly server: Server;

  private constructor(shape: LinkShape) {
    this.answerDelayMs = shape.answerDelayMs ?? 0;
    const [host, port] = brokers()[0]!.split(':');
    this.server = createServer((client) => this.pair(client, connect(Number(port), host!), shape));
  }

  static async start(shape: LinkShape): Promise<ShapedLink> {
    const link = new ShapedLink(shape);
    await new Promise<void>((resolve) => link.server.listen(0, '127.0.0.1', resolve));
    return link;
  }

  /** Down: every connection through the link is cut and new ones are dropped (a broker down); up again: they pass. */
  setDown(down: boolean): void {
    this.down = down;
    if (down) for (const socket of this.sockets) socket.destroy();
  }

  /**
   * From the next connection opened through the link on, nothing more crosses it, either way, on
   * any of its connections: a cluster gone silent (a paused broker) with its TCP still accepted.
   */
  silenceFromNextConnection(): void {
    this.silenceArmed = true;
  }

  /**
   * Silent (true): from now on nothing crosses the link, either way, on any connection, open or
   * new (a network dropping every packet, TCP still accepted). Back (false): the connections open
   * during the silence are cut (what they carried is lost mid-stream) and new ones pass.
   */
  setSilent(silent: boolean): void {
    this.silenceArmed = false;
    this.silent = silent;
    if (!silent) for (const socket of this.sockets) socket.destroy();
  }

  /** A connection through the link (kafkajs unless `client` says otherwise; silent unless given a `logger`). */
  connection(
    clientId: string,
    {
      client = 'kafkajs',
      requestTimeoutMs,
      logger = silentLogger,
      kafkaLogLevel = 'nothing',
    }: {
      client?: KafkaClientName;
      requestTimeoutMs?: number;
      logger?: Logger;
      kafkaLogLevel?: KafkaLogLevel;
    } = {},
  ): KafkaConnection {
    const port = (this.server.address() as { port: number }).port;
    if (client === 'platformatic')
      return new KafkaConnection({
        brokers: [`127.0.0.1:${port}`],
        client,
        clientId,
        logger,
        kafkaLogLevel,
        requestTimeoutMs,
      });
    return new KafkaConnection({
      brokers: brokers(),
      client: 'kafkajs',
      clientId,
      kafkaLogLevel,
      logger,
      requestTimeoutMs,
      kafkaConfig: {
        socketFactory: ({ onConnect }: { onConnect: () => void }) => connect(port, '127.0.0.1', onConnect),
      },
    });
  }

  /**
   * The bytes the throttled uplink (upstreamBytesPerTick) still holds back for the broker, over
   * every open connection: 0 once an upload the client gave up on has gone through.
   */
  get queuedUpstreamBytes(): number {
    let bytes = 0;
    for (const held of this.queued.values()) bytes += held();
    return bytes;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private pair(client: Socket, upstream: Socket, shape: LinkShape): void {
    this.connectionsSeen += 1;
    if (this.down) {
      client.destroy();
      upstream.destroy();
      return;
    }
    if (this.silenceArmed) this.silent = true;
    this.sockets.add(client);
    this.sockets.add(upstream);
    let tick: NodeJS.Timeout | undefined;
    const perTick = shape.upstreamBytesPerTick;
    if (perTick === undefined) client.on('data', (data) => this.silent || upstream.write(data));
    else {
      let pending = Buffer.alloc(0);
      client.on('data', (data) => {
        if (!this.silent) pending = Buffer.concat([pending, data]);
      });
      this.queued.set(client, () => pending.length);
      tick = setInterval(() => {
        if (pending.length === 0 || upstream.destroyed) return;
        upstream.write(pending.subarray(0, perTick));
        pending = pending.subarray(perTick);
      }, 100);
      this.timers.add(tick);
    }
    let last = 0;
    upstream.on('data', (data) => {
      if (this.silent) return;
      const delay = this.answerDelayMs;
      if (delay === 0 && last <= Date.now()) return void (client.destroyed || client.write(data));
      const at = Math.max(Date.now() + delay, last);
      last = at;
      setTimeout(() => client.destroyed || client.write(data), at - Date.now());
    });
    const end = () => {
      if (tick !== undefined) clearInterval(tick);
      this.queued.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}
