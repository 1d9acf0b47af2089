import { Client, Pool, type PoolClient, type PoolConfig } from 'pg';

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

/**
 * Hands a pool's connection back to be destroyed (`reason`: why), not reused. pg-pool ends it as
 * end() does, waiting for the server's FIN for ever; here its socket is destroyed if the server
 * has not closed it within CONNECTION_END_WAIT_MS (endClientWithin).
 */
export function releaseDestroyed(client: PoolClient, reason: Error | true = true): void {
  client.release(reason);
  // A pool's connection is a pg Client (or its native twin): PoolClient's type leaves end() out.
  void endClientWithin(client as unknown as Client);
}

/**
 * A node-postgres pool that ferry makes and ends itself, with an end() that never waits for a
 * silent server: pool.end() waits for a connection still waiting for the server's answer to its
 * startup (until `connectionTimeoutMillis`, if the pool has one), and a connected one's end for
 * the server to close the socket, which a server that went silent since never does: the
 * half-closed socket held the process for ever. end() destroys the sockets of connections still
 * connecting, ends each connected one within CONNECTION_END_WAIT_MS (endClientWithin), then ends
 * the pool without waiting for it (it finds its connections ended and clears its idle timers).
 * `config.Client` (pg's native bindings, a subclass) is the class its connections are made of.
 * An idle connection's error is no uncaught exception: the pool listens to its own 'error'.
 */
export function endablePool(config: PoolConfig): { readonly pool: Pool; end(): Promise<void> } {
  const connecting = new Set<Client>();
  const connected = new Set<Client>();
  const Base = (config.Client ?? Client) as typeof Client;
  class TrackedClient extends Base {
    constructor(...args: ConstructorParameters<typeof Client>) {
      super(...args);
      connecting.add(this);
      this.once('connect', () => {
        if (connecting.delete(this)) connected.add(this);
      });
      this.once('end', () => {
        connecting.delete(this);
        connected.delete(this);
      });
    }
  }
  const pool = new Pool({ ...config, Client: TrackedClient });
  // An idle connection's error (its server restarted or ended the session): pg-pool drops the
  // connection and re-emits the error on the pool, and an 'error' event nobody listens to is
  // thrown, ending the process. Here the pool listens itself, so no caller can forget to (review
  // 145): the next statement opens a new connection, or reports the outage.
  pool.on('error', () => undefined);
  return {
    pool,
    end: async () => {
      for (const client of connecting) destroyClientSocket(client);
      await Promise.all([...connected].map((client) => endClientWithin(client)));
      void pool.end().catch(() => undefined);
    },
  };
}
