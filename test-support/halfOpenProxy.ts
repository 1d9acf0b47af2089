import net from 'node:net';

/**
 * A TCP proxy to PostgreSQL that can go silent like a network blackhole: after `silence()` it
 * drops every byte both ways and never ends the client's socket, also when the client sends its
 * FIN (a Node server answers a FIN with its own by default; this one keeps the half-open socket,
 * so a client waiting for the server's FIN waits for ever). fault-tests' TcpProxy answers FINs.
 */
export interface HalfOpenProxy {
  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string;
  silence(): void;
  /**
   * Goes silent (as silence()) when a client next sends bytes holding `marker` (e.g. the text of a
   * statement, sent with its Parse or Query message); those bytes are dropped too. For a silence
   * that begins in the middle of a transaction.
   */
  silenceOn(marker: string): void;
  /**
   * Ends the connection (both sockets destroyed, as a server or network that drops it) when a
   * client next sends bytes holding `marker`; those bytes never reach PostgreSQL.
   */
  dropOn(marker: string): void;
  close(): void;
}

export async function halfOpenProxy(target: URL): Promise<HalfOpenProxy> {
  let silent = false;
  let marker: Buffer | undefined;
  let dropMarker: Buffer | undefined;
  const sockets: net.Socket[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.push(client, upstream);
    client.on('data', (chunk: Buffer) => {
      if (dropMarker !== undefined && chunk.includes(dropMarker)) {
        upstream.destroy();
        client.destroy();
        return;
      }
      if (marker !== undefined && chunk.includes(marker)) silent = true;
      if (!silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => void (silent || client.write(chunk)));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    upstream.on('close', () => void (silent || client.destroy()));
    client.on('close', () => void (silent || upstream.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (url) => {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    silence: () => void (silent = true),
    silenceOn: (text) => void (marker = Buffer.from(text)),
    dropOn: (text) => void (dropMarker = Buffer.from(text)),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
