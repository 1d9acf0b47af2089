/**
 * Counts this process's open TCP connections to `port` (Linux: the socket inodes among
 * /proc/self/fd matched against /proc/net/tcp and tcp6), so a test can prove that a close()
 * left no broker connection behind, whatever other processes on the machine hold.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Server, Socket } from 'node:net';

/** Where each socket connected since recordSocketOrigins() was called (the connect's stack). */
const origins = new WeakMap<Socket, string>();
let recording = false;

/**
 * From now on, this file's sockets remember the stack that connected them, and
 * describeTcpHandles() prints it beside a socket still open: a leak names its opener. Patches
 * net.Socket.prototype.connect once (a plain wrapper, so a later jest.spyOn on it wraps this one
 * and its mockRestore() puts this one back).
 */
export function recordSocketOrigins(): void {
  if (recording) return;
  recording = true;
  const connect = Socket.prototype.connect;
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    const frames = (new Error().stack ?? '').split('\n').slice(2);
    const own = frames.filter((frame) => !/node:|openSockets|node_modules\/jest|<anonymous>/.test(frame));
    origins.set(this, own.slice(0, 8).join(' <') || frames.slice(0, 8).join(' <'));
    return (connect as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof Socket.prototype.connect;
}

function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // the descriptor closed while listing
    }
  }
  return inodes;
}

/** States counted as open: every state but TIME_WAIT (06) and CLOSE (07). */
const CLOSED_STATES = new Set(['06', '07']);

export function openSocketsTo(port: number): number {
  const inodes = ownSocketInodes();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const remote = fields[2];
      const state = fields[3];
      const inode = fields[9];
      if (!remote || !state || !inode) continue;
      if (remote.endsWith(`:${hexPort}`) && !CLOSED_STATES.has(state) && inodes.has(inode)) count += 1;
    }
  }
  return count;
}

/**
 * This process's TCP handles described for a failure message: each socket's local and remote
 * address and whether it is being destroyed, each server's address (process._getActiveHandles,
 * Node's undocumented list of the handles getActiveResourcesInfo only names).
 */
export function describeTcpHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const described: string[] = [];
  for (const handle of handles) {
    if (handle instanceof Socket) {
      // A pipe (stdio, jest's channel) is a Socket too, with no port either side. A TCP socket
      // with none (one connecting, or destroyed with its handle not yet closed) is described.
      const kind = (handle as unknown as { _handle?: { constructor?: { name?: string } } | null })._handle
        ?.constructor?.name;
      if (handle.localPort === undefined && handle.remotePort === undefined && kind !== 'TCP') {
        if (kind === 'Pipe' || !origins.has(handle)) continue;
      }
      const remote =
        handle.remotePort === undefined ? 'unconnected' : `${handle.remoteAddress}:${handle.remotePort}`;
      const state = [
        handle.destroyed ? 'destroyed' : '',
        handle.connecting ? 'connecting' : '',
        handle.pending ? 'pending' : '',
        kind === undefined ? 'no handle' : '',
      ].filter(Boolean);
      described.push(
        `socket ${handle.localPort ?? '?'} -> ${remote}${state.length > 0 ? ` (${state.join(', ')})` : ''}` +
          (origins.has(handle) ? ` connected at ${origins.get(handle)!.replace(/\s+/g, ' ')}` : ''),
      );
    } else if (handle instanceof Server) {
      const address = handle.address();
      described.push(`server ${typeof address === 'object' && address ? address.port : String(address)}`);
    } else {
      // A TCP handle whose owner is not a net object (no owner set): named by its class.
      const name = (handle as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof handle;
      if (
        !['Timeout', 'Immediate', 'ChildProcess', 'Pipe', 'TTY', 'WriteStream', 'ReadStream'].includes(name)
      ) {
        described.push(`handle ${name}`);
      }
    }
  }
  return described;
}
