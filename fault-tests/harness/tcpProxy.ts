/**
 * A TCP proxy a fault scenario controls, between the application and a server (PostgreSQL).
 *
 * Modes:
 * - `pass`: bytes flow both ways.
 * - `blackhole`: connections are accepted (new ones too) but every byte is dropped in both
 *   directions and nothing is ever answered; no FIN or RST is sent, like a silent network.
 * - `mute`: the client's bytes reach the server (new connections too), but nothing the server
 *   sends comes back: a request is carried out and its answer lost.
 * - `refuse`: the listening socket is closed, so new connections get ECONNREFUSED; existing ones
 *   are left alone.
 * `resetAll()` sends RST on every open connection (both sides) without changing the mode.
 * `upstreamBytesPerTick` (start option): at most that many bytes of each connection reach the
 * server per 100 ms, the rest queued in order: a slow uplink, over which a large request takes
 * long while small ones pass.
 * `setDelay(ms)`: latency, a database slow but alive. Every chunk, in each direction, is held `ms`
 * (from when it reached the proxy) before it is forwarded, in order per connection and direction:
 * a chunk never overtakes one that arrived before it, also when the delay is lowered meanwhile.
 * So each round trip takes at least twice `ms` while the server answers at once. 0 (the
 * default) forwards at once. The modes apply when a chunk arrives; a chunk held when its
 * connection is reset is dropped with it.
 * Leaving `blackhole` or `mute` resets the connections that lived through it: their streams lost bytes and
 * can never be in sync again (the client has normally given up on them by then). With
 * `{ keepDamaged: true }` they are not reset but stay silent for good (bytes dropped both ways, no
 * FIN, no RST): half-open connections, as a peer that lost its state leaves them, while new
 * connections pass.
 */
import net from 'node:net';

export type ProxyMode = 'pass' | 'blackhole' | 'mute' | 'refuse';

interface Pair {
  readonly client: net.Socket;
  upstream: net.Socket | undefined;
  /** True once the pair saw blackhole or mute mode: its streams lost bytes. */
  damaged: boolean;
  /** The client's bytes the throttled uplink (upstreamBytesPerTick) still holds back. */
  queued?: () => number;
}

/** One direction of a connection under setDelay: chunks held in arrival order. */
interface DelayLine {
  readonly held: Array<{ readonly chunk: Buffer; readonly at: number }>;
  timer: NodeJS.Timeout | undefined;
}

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  private currentMode: ProxyMode = 'pass';
  private listenPort = 0;
  private delay = 0;
  /** Connections accepted since start (a recovering client opens new ones). */
  accepted = 0;
  /** Connections reset by resetAll() or by leaving blackhole. */
  resets = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly upstreamBytesPerTick: number | undefined,
  ) {}

  static async start(
    target: { host: string; port: number },
    shape: { upstreamBytesPerTick?: number } = {},
  ): Promise<TcpProxy> {
    const proxy = new TcpProxy(target.host, target.port, shape.upstreamBytesPerTick);
    await proxy.listen(0);
    return proxy;
  }

  get port(): number {
    return this.listenPort;
  }

  get mode(): ProxyMode {
    return this.currentMode;
  }

  /**
   * The bytes the throttled uplink (upstreamBytesPerTick) still holds back for the server, over
   * every open connection: 0 once an upload the client gave up on has gone through.
   */
  get queuedUpstreamBytes(): number {
    return [...this.pairs].reduce((bytes, pair) => bytes + (pair.queued?.() ?? 0), 0);
  }

  /** Open connections that lived through blackhole or mute and were kept (silent for good). */
  get damagedConnections(): number {
    return [...this.pairs].filter((pair) => pair.damaged).length;
  }

  get openConnections(): number {
    return this.pairs.size;
  }

  /** What setDelay set: each chunk is held that long, each way. */
  get delayMs(): number {
    return this.delay;
  }

  /** Holds every chunk, both ways, `ms` before forwarding it (order kept); 0 passes at once. */
  setDelay(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`proxy delay must be >= 0 ms, got ${ms}`);
    this.delay = ms;
  }

  /** Rewrites a connection URL so that it goes through the proxy. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.listenPort);
    return parsed.toString();
  }

  async setMode(mode: ProxyMode, options: { keepDamaged?: boolean } = {}): Promise<void> {
    const previous = this.currentMode;
    if (previous === mode) return;
    this.currentMode = mode;
    if (previous === 'refuse') await this.listen(this.listenPort);
    if (lossy(mode)) for (const pair of this.pairs) pair.damaged = true;
    if (lossy(previous) && options.keepDamaged !== true) {
      for (const pair of [...this.pairs]) if (pair.damaged) this.reset(pair);
    }
    if (mode === 'refuse') await this.stopListening();
  }

  /** RST on every open connection, both towards the client and towards the server. */
  resetAll(): number {
    const pairs = [...this.pairs];
    for (const pair of pairs) this.reset(pair);
    return pairs.length;
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.reset(pair);
    await this.stopListening();
  }

  private reset(pair: Pair): void {
    this.pairs.delete(pair);
    this.resets += 1;
    pair.client.resetAndDestroy();
    pair.upstream?.resetAndDestroy();
  }

  private listen(port: number): Promise<void> {
    const server = net.createServer((socket) => this.onConnection(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        this.listenPort = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  private stopListening(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  /** Writes to the pair's server side, at most upstreamBytesPerTick per 100 ms when set. */
  private throttled(pair: Pair, onClose: () => void): (chunk: Buffer) => void {
    const perTick = this.upstreamBytesPerTick;
    if (perTick === undefined) return (chunk) => void pair.upstream?.write(chunk);
    let queued = Buffer.alloc(0);
    pair.queued = () => queued.length;
    const tick = setInterval(() => {
      if (queued.length === 0 || !pair.upstream) return;
      pair.upstream.write(queued.subarray(0, perTick));
      queued = queued.subarray(perTick);
    }, 100);
    tick.unref();
    const stop = (): void => clearInterval(tick);
    pair.client.once('close', stop);
    pair.client.once('error', () => {
      stop();
      onClose();
    });
    return (chunk) => {
      queued = Buffer.concat([queued, chunk]);
    };
  }

  /**
   * `write` after the proxy's delay (setDelay), in arrival order: a chunk goes once it has been
   * held the delay it arrived under and every chunk before it went. `alive` false: dropped.
   */
  private delayed(write: (chunk: Buffer) => void, alive: () => boolean): (chunk: Buffer) => void {
    const line: DelayLine = { held: [], timer: undefined };
    const pump = (): void => {
      line.timer = undefined;
      while (line.held.length > 0) {
        const wait = line.held[0]!.at - performance.now();
        if (wait > 0) {
          line.timer = setTimeout(pump, wait);
          line.timer.unref();
          return;
        }
        const { chunk } = line.held.shift()!;
        if (alive()) write(chunk);
      }
    };
    return (chunk) => {
      if (this.delay === 0 && line.held.length === 0) return write(chunk);
      line.held.push({ chunk, at: performance.now() + this.delay });
      if (line.timer === undefined && line.held.length === 1) pump();
    };
  }

  private onConnection(client: net.Socket): void {
    this.accepted += 1;
    const pair: Pair = { client, upstream: undefined, damaged: lossy(this.currentMode) };
    this.pairs.add(pair);
    const drop = (): void => {
      if (this.pairs.delete(pair)) {
        client.destroy();
        pair.upstream?.destroy();
      }
    };
    client.on('error', drop);
    client.on('close', drop);
    // Bytes are forwarded by hand (not pipe) so that blackhole mode can drop them.
    const alive = (): boolean => this.pairs.has(pair);
    const forward = this.delayed(this.throttled(pair, drop), alive);
    client.on('data', (chunk) => {
      if (this.currentMode !== 'mute' && (this.currentMode === 'blackhole' || pair.damaged)) return;
      forward(chunk);
    });
    if (this.currentMode === 'blackhole') return; // accepted during blackhole: never connected, never answered
    client.pause();
    const upstream = net.connect(this.targetPort, this.targetHost, () => client.resume());
    pair.upstream = upstream;
    const answer = this.delayed((chunk) => void client.write(chunk), alive);
    upstream.on('data', (chunk) => {
      if (lossy(this.currentMode) || pair.damaged) return;
      answer(chunk);
    });
    upstream.on('error', drop);
    upstream.on('close', drop);
  }
}

/** Modes in which bytes are lost: a connection that lived through one is never in sync again. */
function lossy(mode: ProxyMode): boolean {
  return mode === 'blackhole' || mode === 'mute';
}
