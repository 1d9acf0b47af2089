import type { Client } from 'pg';

/**
 * The longest wait for the server's answer to Terminate when a connection is ended: a live server
 * closes the socket at once; the Terminate has been sent by then, so destroying the socket after
 * it costs nothing.
 */
export const CONNECTION_END_WAIT_MS = 1_000;

/**
 * Ends the connection, waiting at most `ms` for the server: end() sends Terminate and waits for
 * the server's FIN, which a connection that went silent (a network blackhole) never sends, and
 * the half-closed socket would keep the process alive for ever. Past `ms` the socket is destroyed;
 * PostgreSQL ends the session when it notices. Never fails.
 */
export async function endClientWithin(client: Client, ms: number = CONNECTION_END_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([client.end().catch(() => undefined), late]);
  clearTimeout(timer);
  destroyClientSocket(client);
}

/**
 * Frees the connection's socket at once, without a word to the server (end() on a silently dead
 * connection waits for a server that never answers). pg keeps the socket as `connection.stream`
 * (not public API).
 */
export function destroyClientSocket(client: Client): void {
  const internal = client as unknown as { connection?: { stream?: { destroy?: () => void } } };
  internal.connection?.stream?.destroy?.();
}
