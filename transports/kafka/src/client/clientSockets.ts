import type { Socket } from 'node:net';

/**
 * A @platformatic/kafka client as ClientSockets sees it: its connection pool reports each new
 * connection, and closed opens none; close() marks the client closed (its waiting retries end).
 */
interface ConnectingClient {
  on(event: 'client:broker:connect', listener: (event: { connection: { socket?: Socket } }) => void): unknown;
  /** `force` (a consumer's and a producer's): streams closed, sends not waited for. */
  close(force?: boolean): Promise<unknown>;
  readonly connections: { close(): Promise<unknown> };
}

/**
 * The open broker sockets of one @platformatic/kafka client (producer, consumer or admin, its stream's
 * fetch connections too), for a close that reached its bound (closeTimeoutMs): destroy() ends
 * them all at once, failing whatever the client still waits for from a silent cluster (a send,
 * a LeaveGroup). The client is closed first, so nothing it still does opens a connection: a send
 * failed by the destroy was retried a second later, and after a route's end straight to the
 * broker, a socket opened after ferry's close (review 100). A socket it opens anyway ends at once.
 */
export class ClientSockets {
  private readonly sockets = new Set<Socket>();
  private destroyed = false;

  /** `forced`: the client's close() takes `force` (a consumer's and a producer's; an admin's does not). */
  constructor(
    private readonly client: ConnectingClient,
    private readonly forced = false,
  ) {
    client.on('client:broker:connect', ({ connection }) => {
      const socket = connection.socket;
      if (socket === undefined || socket.destroyed) return;
      if (this.destroyed) return void socket.destroy();
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Destroys every socket (and each one opened from now on); resolves once all are closed. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    const closed = [...this.sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    // Neither waited for: their end on a silent cluster is the sockets' destruction below. The
    // pool closed first opens no connection whatever the client does next, also when its close()
    // refuses or fails and clears its closed flag (a consumer's refuses while its stream runs, and
    // fails with its LeaveGroup: its group requests and their retries went on connecting, review 125).
    void this.client.connections.close().catch(() => undefined);
    // Forced: a consumer's stream closed and its heartbeats cancelled even though the LeaveGroup
    // that follows fails (an unforced close() refuses while its stream runs: its heartbeats went
    // on connecting). Whatever it does, the base class's close follows, now and once it settled
    // (a failed LeaveGroup marks the client open again in between).
    const closing = (this.forced ? this.client.close(true) : this.client.close()).catch(() => undefined);
    void baseClose(this.client)?.catch(() => undefined);
    void closing.then(() => baseClose(this.client)?.catch(() => undefined));
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }
}

/**
 * The close of the client's base class (@platformatic/kafka's Base, the last `close` up its
 * prototype chain): marks the client closed and emits its `client:close`, which ends the retries
 * waiting on timers. A consumer whose own close() failed with its LeaveGroup clears its closed flag
 * and never reaches it: a fetch retry waiting on its timer connected to the broker a second later,
 * after ferry's close() resolved, and went on retrying (review 132's silent LeaveGroup, seen from
 * the next test file of the same process). The package is an optional peer, loaded lazily, so the
 * class is found on the client rather than imported.
 */
function baseClose(client: object): Promise<unknown> | undefined {
  let base: { close?: unknown } | undefined;
  for (
    let proto: object | null = Object.getPrototypeOf(client) as object | null;
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    if (Object.prototype.hasOwnProperty.call(proto, 'close')) base = proto as { close?: unknown };
  }
  const close = base?.close;
  if (typeof close !== 'function') return undefined;
  return Promise.resolve(close.call(client) as unknown);
}
