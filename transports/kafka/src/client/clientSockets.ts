import type { Socket } from 'node:net';

/** A @platformatic/kafka client as ClientSockets listens to it (its connection pool reports each new connection). */
interface ConnectingClient {
  on(event: 'client:broker:connect', listener: (event: { connection: { socket?: Socket } }) => void): unknown;
}

/**
 * The open broker sockets of one @platformatic/kafka client (producer, consumer or admin, its stream's
 * fetch connections too), for a close that reached its bound (closeTimeoutMs): destroy() ends
 * them all at once, failing whatever the client still waits for from a silent cluster (a send,
 * a LeaveGroup), and a socket the client opens after it (a retry) ends at once.
 */
export class ClientSockets {
  private readonly sockets = new Set<Socket>();
  private destroyed = false;

  constructor(client: ConnectingClient) {
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
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }
}
