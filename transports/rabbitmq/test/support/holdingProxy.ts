/**
 * A TCP proxy between a client and RabbitMQ that can hold back what the broker sends.
 *
 * `holdDownstream()`: client → broker bytes keep flowing, broker → client bytes are buffered
 * (nothing is dropped, no FIN or RST), so the broker processes every publish but its confirms
 * never reach the client. `releaseDownstream()` writes the buffered bytes in order: the AMQP
 * stream is intact and the connection goes on. Only the connections through this proxy are
 * affected, never the shared broker.
 */
import net from 'node:net';

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
  readonly held: Buffer[];
}

export class HoldingProxy {
  private readonly pairs = new Set<Pair>();
  private holding = false;
  private cut: { bytes: number; done: () => void } | null = null;
  /** Connections accepted since start; a reconnecting client opens a new one. */
  accepted = 0;

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(targetUrl: string): Promise<HoldingProxy> {
    const parsed = new URL(targetUrl);
    const target = { host: parsed.hostname, port: Number(parsed.port || 5672) };
    const server = net.createServer();
    const proxy = new HoldingProxy(server, target);
    server.on('connection', (socket) => proxy.onConnection(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** `url` with host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String((this.server.address() as net.AddressInfo).port);
    return parsed.toString();
  }

  /** Bytes the broker sent that are being held back, over all connections. */
  get heldBytes(): number {
    let total = 0;
    for (const pair of this.pairs) for (const chunk of pair.held) total += chunk.length;
    return total;
  }

  /**
   * Cuts the next connection the proxy accepts once it has passed `bytes` from the broker to the
   * client: what is within them is written, the client's socket ended, then the broker's
   * destroyed (a connection lost in the middle of whatever it was sending). Once: the connections
   * after it pass everything. Resolves when it cut.
   */
  cutDownstreamAfter(bytes: number): Promise<void> {
    return new Promise((resolve) => {
      this.cut = { bytes, done: resolve };
    });
  }

  holdDownstream(): void {
    this.holding = true;
  }

  releaseDownstream(): void {
    this.holding = false;
    for (const pair of this.pairs) {
      for (const chunk of pair.held.splice(0)) pair.client.write(chunk);
    }
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.drop(pair);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(client: net.Socket): void {
    this.accepted += 1;
    client.pause();
    const upstream = net.connect(this.target.port, this.target.host, () => client.resume());
    const pair: Pair = { client, upstream, held: [] };
    this.pairs.add(pair);
    const drop = () => this.drop(pair);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    const cut = this.cut;
    this.cut = null;
    let passed = 0;
    upstream.on('data', (chunk: Buffer) => {
      if (cut !== null) {
        if (passed >= cut.bytes) return;
        passed += chunk.length;
        if (passed < cut.bytes) return void client.write(chunk);
        client.end(chunk.subarray(0, chunk.length - (passed - cut.bytes)), () => {
          upstream.destroy();
          cut.done();
        });
        return;
      }
      if (this.holding || pair.held.length > 0) pair.held.push(chunk);
      else client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', drop);
      socket.on('close', drop);
    }
  }

  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
