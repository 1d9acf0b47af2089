import net from 'node:net';
import { AMQP_URL } from './broker';

/**
 * A link to the broker whose answers reach the client `answerDelayMs` late (in order), at most
 * `bytesPerSecond` of them (a narrow link: what the broker sends after a large message reaches the
 * client only once that message went by), and that can go silent (nothing crosses either way;
 * back, the connections that lived through it are cut).
 */
export class SlowLink {
  answerDelayMs = 0;
  bytesPerSecond = Infinity;
  private silent = false;
  private readonly sockets = new Set<net.Socket>();
  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<SlowLink> {
    const server = net.createServer();
    const link = new SlowLink(server);
    server.on('connection', (client) => link.pair(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return link;
  }

  url(): string {
    const parsed = new URL(AMQP_URL);
    parsed.hostname = '127.0.0.1';
    parsed.port = String((this.server.address() as net.AddressInfo).port);
    return parsed.toString();
  }

  setSilent(silent: boolean): void {
    this.silent = silent;
    if (!silent) for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private pair(client: net.Socket): void {
    const target = new URL(AMQP_URL);
    const server = net.connect(Number(target.port || 5672), target.hostname);
    this.sockets.add(client);
    this.sockets.add(server);
    client.on('data', (data) => this.silent || server.write(data));
    let last = 0;
    server.on('data', (data) => {
      if (this.silent) return;
      const at =
        Math.max(Date.now() + this.answerDelayMs, last) + (data.length * 1_000) / this.bytesPerSecond;
      last = at;
      setTimeout(() => client.destroyed || client.write(data), at - Date.now());
    });
    const end = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on('close', end).on('error', end);
    server.on('close', end).on('error', end);
  }
}
