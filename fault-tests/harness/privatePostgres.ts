/**
 * A disposable private PostgreSQL cluster for fault suites: `initdb` into a temporary directory,
 * its own port on 127.0.0.1, trust authentication, started and stopped with `pg_ctl`. Nothing here
 * touches the machine's own cluster (5432).
 *
 * PostgreSQL refuses to run as root, so when the tests run as root every server binary runs as the
 * `postgres` OS user through `runuser`, and the temporary directories are handed to that user.
 * Tablespace fixtures mount a size-bounded tmpfs, which needs root.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { oneStatement } from '../../test-support/oneStatement';
import { waitFor } from './waitFor';

const run = promisify(execFile);

export const PG_BIN = process.env.FERRY_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const SERVER_USER = 'postgres';

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function serverIds(): { uid: number; gid: number } | null {
  if (!isRoot()) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${SERVER_USER}:`));
  if (!line) throw new Error(`no ${SERVER_USER} OS user to run PostgreSQL as`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Runs a PostgreSQL binary, as the postgres OS user when we are root. */
async function pgBinary(
  binary: string,
  args: string[],
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  const file = join(PG_BIN, binary);
  const [command, argv] = isRoot() ? ['runuser', ['-u', SERVER_USER, '--', file, ...args]] : [file, args];
  try {
    return await run(command, argv, { timeout: timeoutMs, cwd: tmpdir() });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${binary} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** A directory owned by the server's OS user. */
export function serverOwnedDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const ids = serverIds();
  if (ids) chownSync(dir, ids.uid, ids.gid);
  return dir;
}

/** A free TCP port on 127.0.0.1 (the OS picks it; a short race with other binders is accepted). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ClusterOptions {
  /** Extra postgresql.conf lines (`key = value`). */
  readonly settings?: Readonly<Record<string, string>>;
}

/** Defaults for a small test cluster. fsync stays on unless a scenario turns it off. */
const BASE_SETTINGS: Readonly<Record<string, string>> = {
  listen_addresses: "'127.0.0.1'",
  shared_buffers: "'16MB'",
  max_connections: '60',
  wal_level: 'replica',
  max_wal_senders: '4',
  hot_standby: 'on',
  logging_collector: 'off',
  log_min_messages: 'warning',
};

function confLines(settings: Readonly<Record<string, string>>): string {
  return Object.entries(settings)
    .map(([key, value]) => `${key} = ${value}\n`)
    .join('');
}

export class PrivateCluster {
  private running = false;

  private constructor(
    /** The temporary directory that holds the data directory, the log and the socket. */
    readonly root: string,
    readonly port: number,
  ) {}

  get dataDir(): string {
    return join(this.root, 'data');
  }

  get logFile(): string {
    return join(this.root, 'server.log');
  }

  /** `initdb` and start a new cluster. */
  static async create(name: string, options: ClusterOptions = {}): Promise<PrivateCluster> {
    return PrivateCluster.setUp(name, async (cluster) => {
      await pgBinary('initdb', [
        '-D',
        cluster.dataDir,
        '--auth=trust',
        '--username=postgres',
        '--encoding=UTF8',
        '--no-instructions',
      ]);
      cluster.configure({ ...options.settings });
      await cluster.start();
    });
  }

  /**
   * Makes a cluster's port and folder and runs its set-up (`work`). When any step fails (initdb, the base
   * backup, a start refused or slower than pg_ctl's 60 s) the cluster is destroyed before the
   * error is rethrown: a server that may be up is stopped and the folder removed, since the
   * caller never gets the object its afterAll would destroy (review 75).
   */
  private static async setUp(
    name: string,
    work: (cluster: PrivateCluster) => Promise<void>,
  ): Promise<PrivateCluster> {
    const port = await freePort();
    const cluster = new PrivateCluster(serverOwnedDir(`ferry-pg-${name}-`), port);
    try {
      await work(cluster);
      return cluster;
    } catch (error) {
      await cluster.destroy().catch(() => undefined);
      throw error;
    }
  }

  /**
   * A streaming standby of `primary`: `pg_basebackup -R` (standby.signal and primary_conninfo)
   * into a new directory, on its own port, started.
   */
  static async standbyOf(
    primary: PrivateCluster,
    name: string,
    options: ClusterOptions = {},
  ): Promise<PrivateCluster> {
    return PrivateCluster.setUp(name, async (standby) => {
      await pgBinary('pg_basebackup', [
        '-D',
        standby.dataDir,
        '-h',
        '127.0.0.1',
        '-p',
        String(primary.port),
        '-U',
        'postgres',
        '-X',
        'stream',
        '-R',
        '-c',
        'fast',
      ]);
      standby.configure({ ...options.settings });
      await standby.start();
    });
  }

  /** Appends settings; later lines win over the ones initdb or the base backup wrote. */
  private configure(settings: Readonly<Record<string, string>>): void {
    const socketDir = join(this.root, 'socket');
    if (!existsSync(socketDir)) {
      mkdirSync(socketDir);
      const ids = serverIds();
      if (ids) chownSync(socketDir, ids.uid, ids.gid);
    }
    appendFileSync(
      join(this.dataDir, 'postgresql.conf'),
      confLines({
        ...BASE_SETTINGS,
        port: String(this.port),
        unix_socket_directories: `'${socketDir}'`,
        ...settings,
      }),
    );
  }

  url(database = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    await pgBinary('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '60', 'start']);
    this.running = true;
  }

  /** Stops the postmaster; `immediate` is a crash (no checkpoint, WAL recovery on the next start). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await pgBinary('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
    this.running = false;
  }

  /** Promotes a standby and waits until it accepts writes. */
  async promote(): Promise<void> {
    await pgBinary('pg_ctl', ['-D', this.dataDir, '-w', '-t', '60', 'promote']);
  }

  /** One short-lived connection for a statement (no pool that could outlive a crash). */
  async query<T extends Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
    database = 'postgres',
  ): Promise<T[]> {
    return oneStatement<T>(this.url(database), text, values);
  }

  serverLog(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** Stops the server if it runs (immediately: the data is thrown away) and removes its directory. */
  async destroy(): Promise<void> {
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
      await this.stop('immediate').catch(() => undefined);
    }
    this.running = false;
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * A size-bounded tmpfs owned by the server's OS user, for a tablespace that fills up.
 * Needs root (mount / umount).
 */
export class BoundedFilesystem {
  private mounted = false;

  private constructor(readonly dir: string) {}

  static async mount(sizeMiB: number): Promise<BoundedFilesystem> {
    if (!isRoot()) throw new Error('mounting a bounded tmpfs needs root');
    const fs = new BoundedFilesystem(mkdtempSync(join(tmpdir(), 'ferry-tmpfs-')));
    try {
      await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', fs.dir]);
      fs.mounted = true;
      const ids = serverIds();
      if (ids) chownSync(fs.dir, ids.uid, ids.gid);
      return fs;
    } catch (error) {
      // The caller never gets the object to unmount: undo the mount and the folder here (review 75).
      await fs.unmount().catch(() => undefined);
      throw error;
    }
  }

  /** A subdirectory owned by the server's OS user (CREATE TABLESPACE wants an empty directory). */
  subdir(name: string): string {
    const dir = join(this.dir, name);
    mkdirSync(dir);
    const ids = serverIds();
    if (ids) chownSync(dir, ids.uid, ids.gid);
    return dir;
  }

  async usage(): Promise<{ usedKiB: number; availableKiB: number }> {
    const { stdout } = await run('df', ['-k', '--output=used,avail', this.dir]);
    const [used, avail] = stdout.trim().split('\n')[1]!.trim().split(/\s+/).map(Number);
    return { usedKiB: used!, availableKiB: avail! };
  }

  async unmount(): Promise<void> {
    if (this.mounted) {
      await run('umount', [this.dir]);
      this.mounted = false;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** harness/waitFor with a positional deadline, as the database scenarios call it. */
export function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 25,
): Promise<T> {
  return waitFor(what, check, { timeoutMs, intervalMs }) as Promise<T>;
}
