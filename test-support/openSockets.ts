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

/** The owners of this process's ref'd handles (process._getActiveHandles, Node's undocumented list). */
function activeHandles(): unknown[] {
  return (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
}

function handleClass(owner: unknown): string | undefined {
  const handle = (owner as { _handle?: { constructor?: { name?: string } } | null })._handle;
  return handle?.constructor?.name;
}

/**
 * Whether a handle owner holds a TCP handle: a socket (a pipe, stdio or jest's channel, is a
 * Socket too: left out; one with no handle left, destroyed with its close pending, counts), a
 * server listening on a port, or a TCP handle no net object owns (a connect attempt before its
 * socket adopts it).
 */
function isTcp(owner: unknown): boolean {
  if (owner instanceof Socket) return handleClass(owner) !== 'Pipe';
  if (owner instanceof Server) return typeof owner.address() === 'object';
  return (owner as { constructor?: { name?: string } } | null)?.constructor?.name === 'TCP';
}

function describeTcp(owner: unknown): string {
  if (owner instanceof Socket) {
    const remote =
      owner.remotePort === undefined ? 'unconnected' : `${owner.remoteAddress}:${owner.remotePort}`;
    const state = [
      owner.destroyed ? 'destroyed' : '',
      owner.connecting ? 'connecting' : '',
      handleClass(owner) === undefined ? 'no handle' : '',
    ].filter(Boolean);
    return (
      `socket ${owner.localPort ?? '?'} -> ${remote}${state.length > 0 ? ` (${state.join(', ')})` : ''}` +
      (origins.has(owner) ? ` connected at ${origins.get(owner)!.replace(/\s+/g, ' ')}` : '')
    );
  }
  if (owner instanceof Server) {
    const address = owner.address();
    return `server ${typeof address === 'object' && address ? address.port : String(address)}`;
  }
  return 'a TCP handle no socket owns';
}

/** This process's TCP handles, for tcpHandlesSince(). */
export function tcpHandles(): ReadonlySet<unknown> {
  return new Set(activeHandles().filter(isTcp));
}

/**
 * The TCP handles (sockets, servers, connect attempts) this process holds that `before` (a
 * tcpHandles() taken earlier) did not, each described with its addresses, state and, for a socket
 * connected since recordSocketOrigins(), the stack that connected it: what a close() left
 * holding the process. Handles an earlier test file of the same jest worker left are not counted.
 */
export function tcpHandlesSince(before: ReadonlySet<unknown>): string[] {
  return activeHandles()
    .filter((owner) => isTcp(owner) && !before.has(owner))
    .map(describeTcp);
}
