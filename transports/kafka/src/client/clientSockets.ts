import type { Socket } from 'node:net';

/**
 * A @platformatic/kafka client as ClientSockets sees it: its connection pool reports each new
 * connection, and close() marks it closed (its pool then opens no connection, its waiting retries end).
 */
interface ConnectingClient {
  on(event: 'client:broker:connect', listener: (event: { connection: { socket?: Socket } }) => void): unknown;
  close(): Promise<unknown>;
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
    // Not waited for: its end on a silent cluster is the sockets' destruction below.
    void this.client.close().catch(() => undefined);
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }
}
