import type { Socket } from 'node:net';

/**
 * A @platformatic/kafka client as ClientSockets sees it: its connection pool reports each new
 * connection, and closed opens none; close() marks the client closed (its waiting retries end).
 */
interface ConnectingClient {
  on(event: 'client:broker:connect', listener: (event: { connection: { socket?: Socket } }) => void): unknown;
  close(): Promise<unknown>;
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

  constructor(private readonly client: ConnectingClient) {
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
    void this.client.close().catch(() => undefined);
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }
}
