import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll } from '@jest/globals';

/** A TCP peer that accepts every connection and never writes a byte: no handshake (AMQP, Kafka, PostgreSQL, HTTP) is answered. */
export interface SilentPeer {
  /** Its port, once the file's beforeAll ran. */
  readonly port: number;
  /** The connections it holds now (a client's end is seen: what it writes is read and dropped). */
  readonly sockets: ReadonlySet<Socket>;
}

/** Starts a SilentPeer before the file's tests (beforeAll) and stops it after them (afterAll). */
export function useSilentPeer(): SilentPeer {
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  const peer = { port: 0, sockets };
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      socket.resume();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    peer.port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });
  return peer;
}
