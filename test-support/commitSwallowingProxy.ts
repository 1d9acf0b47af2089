import net from 'node:net';

/** The simple-protocol COMMIT node-postgres and Prisma's pg adapter send, and Kysely's `commit`. */
const COMMITS = ['COMMIT', 'commit'].map((text) =>
  Buffer.concat([Buffer.from('Q'), Buffer.from([0, 0, 0, 11]), Buffer.from(`${text}\0`)]),
);

/** The frontend's Terminate message ('X', length 4): the client is ending the connection. */
const TERMINATE = Buffer.from([0x58, 0, 0, 0, 4]);

export interface CommitSwallowingProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string;
  /**
   * The next COMMIT any connection sends is forwarded, and every answer after it on that
   * connection dropped (PostgreSQL commits; the client never hears so). `everything`: from then
   * on every connection, old and new, goes silent both ways until heal() (a network partition
   * right after the COMMIT left). `dropCommit`: the COMMIT itself never reaches PostgreSQL either
   * (the transaction stays open until its session ends, then rolls back).
   */
  arm(options?: { everything?: boolean; dropCommit?: boolean }): void;
  /** A COMMIT was forwarded and its answer dropped. */
  swallowed(): boolean;
  /** COMMITs sent through the proxy so far. */
  commits(): number;
  /** Ends the partition `arm({ everything: true })` started (the swallowing connection stays silent). */
  heal(): void;
  /**
   * From now on a connection that sends Terminate goes silent for good, as a server that went
   * silent just before the client ended the connection: the Terminate is dropped, nothing more
   * is forwarded either way, and the proxy never ends that client's socket, also when the client
   * sends its FIN (a client waiting for the server's FIN waits for ever).
   */
  silenceEnds(): void;
  close(): void;
}

/** A TCP proxy to PostgreSQL at 127.0.0.1:5432 that loses the answer of a COMMIT once armed. */
export async function commitSwallowingProxy(): Promise<CommitSwallowingProxy> {
  let armed: { everything: boolean; dropCommit: boolean } | undefined;
  let swallowed = false;
  let partitioned = false;
  let commits = 0;
  let silentEnds = false;
  const sockets = new Set<net.Socket>();
  // Half-open, so that the FIN of a client whose Terminate was silenced (silenceEnds) goes
  // unanswered; any other client's FIN closes both sides, as it would without it.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect(5432, '127.0.0.1');
    sockets.add(client).add(upstream);
    let silent = false;
    let deadEnd = false;
    client.on('data', (chunk) => {
      if (partitioned || deadEnd) return;
      if (
        silentEnds &&
        chunk.length >= TERMINATE.length &&
        chunk.subarray(-TERMINATE.length).equals(TERMINATE)
      ) {
        deadEnd = true;
        silent = true;
        return;
      }
      const commit = COMMITS.some((text) => chunk.includes(text));
      if (commit) commits += 1;
      if (armed && commit) {
        const { everything, dropCommit } = armed;
        partitioned = everything;
        armed = undefined;
        silent = true;
        swallowed = true;
        if (dropCommit) return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!silent && !partitioned) client.write(chunk);
    });
    const end = (): void => {
      if (deadEnd) return;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end).on('end', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: (url) => {
      const parsed = new URL(url);
      parsed.host = `127.0.0.1:${port}`;
      return parsed.toString();
    },
    arm: (options = {}) =>
      void (armed = { everything: options.everything ?? false, dropCommit: options.dropCommit ?? false }),
    swallowed: () => swallowed,
    commits: () => commits,
    heal: () => void (partitioned = false),
    silenceEnds: () => void (silentEnds = true),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
