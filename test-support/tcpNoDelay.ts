/**
 * Which TCP sockets a client opened and whether each has Nagle's algorithm off (TCP_NODELAY).
 *
 * With Nagle on, a small write while an earlier one is unacknowledged waits for the peer's ACK,
 * which Linux delays up to 40 ms: an ack or cancel frame written right after another frame, or a
 * request written while a long-poll request is outstanding, stalls that long.
 *
 * Sockets are recorded as they connect (every client ends in `net.Socket.prototype.connect`:
 * `net.connect`, `tls.connect`, http agents), whichever library opened them. Node keeps the
 * setting in the socket's `kSetNoDelay` slot (what `setNoDelay` and the `noDelay` option write).
 */
import net from 'node:net';

export interface SocketRecorder {
  /** Sockets connected to `port` since `recordSockets()`, with their TCP_NODELAY setting. */
  to(port: number): { readonly socket: net.Socket; readonly noDelay: boolean }[];
  stop(): void;
}

function noDelaySlot(socket: net.Socket): symbol {
  const slot = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
  if (!slot) throw new Error('this Node version keeps no kSetNoDelay slot on sockets: update tcpNoDelay.ts');
  return slot;
}

export function recordSockets(): SocketRecorder {
  const sockets: net.Socket[] = [];
  const connect = net.Socket.prototype.connect;
  const spy = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (
    this: net.Socket,
    ...args: unknown[]
  ) {
    sockets.push(this);
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  });
  return {
    to(port) {
      return sockets
        .filter((socket) => socket.remotePort === port)
        .map((socket) => ({ socket, noDelay: Reflect.get(socket, noDelaySlot(socket)) === true }));
    },
    stop: () => spy.mockRestore(),
  };
}
