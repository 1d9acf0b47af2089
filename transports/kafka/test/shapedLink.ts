import { createServer, connect, type Server, type Socket } from 'node:net';
import { KafkaConnection } from '../src';
import { brokers, silentLogger } from './support';

/** How a ShapedLink slows the traffic between kafkajs and the first broker. */
export interface LinkShape {
  /** Each of the broker's answers reaches the client this many ms late (in order): a slow cluster. */
  readonly answerDelayMs?: number;
  /** At most this many bytes go to the broker per 100 ms (a slow uplink); unlimited when absent. */
  readonly upstreamBytesPerTick?: number;
}

/**
 * A TCP link to the first broker that delays its answers or throttles what is sent to it, and a
 * kafkajs connection whose every broker socket goes through it (kafkajs only: it lets the
 * application open the broker sockets, `socketFactory`).
 */
export class ShapedLink {
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private readonly server: Server;

  private constructor(shape: LinkShape) {
    const [host, port] = brokers()[0]!.split(':');
    this.server = createServer((client) => this.pair(client, connect(Number(port), host!), shape));
  }

  static async start(shape: LinkShape): Promise<ShapedLink> {
    const link = new ShapedLink(shape);
    await new Promise<void>((resolve) => link.server.listen(0, '127.0.0.1', resolve));
    return link;
  }

  /** A kafkajs connection through the link. */
  connection(clientId: string): KafkaConnection {
    const port = (this.server.address() as { port: number }).port;
    return new KafkaConnection({
      brokers: brokers(),
      client: 'kafkajs',
      clientId,
      kafkaLogLevel: 'nothing',
      logger: silentLogger,
      kafkaConfig: {
        socketFactory: ({ onConnect }: { onConnect: () => void }) => connect(port, '127.0.0.1', onConnect),
      },
    });
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private pair(client: Socket, upstream: Socket, shape: LinkShape): void {
    this.sockets.add(client);
    this.sockets.add(upstream);
    let tick: NodeJS.Timeout | undefined;
    const perTick = shape.upstreamBytesPerTick;
    if (perTick === undefined) client.on('data', (data) => upstream.write(data));
    else {
      let pending = Buffer.alloc(0);
      client.on('data', (data) => {
        pending = Buffer.concat([pending, data]);
      });
      tick = setInterval(() => {
        if (pending.length === 0 || upstream.destroyed) return;
        upstream.write(pending.subarray(0, perTick));
        pending = pending.subarray(perTick);
      }, 100);
      this.timers.add(tick);
    }
    const delay = shape.answerDelayMs ?? 0;
    let last = 0;
    upstream.on('data', (data) => {
      if (delay === 0) return void (client.destroyed || client.write(data));
      const at = Math.max(Date.now() + delay, last);
      last = at;
      setTimeout(() => client.destroyed || client.write(data), at - Date.now());
    });
    const end = () => {
      if (tick !== undefined) clearInterval(tick);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}
