/**
 * Running the quick-start application built from the tarballs: its commands (synchronously, with
 * the application's own environment) and its programs (as short-lived node processes whose output
 * the test waits on, each wait with a deadline).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './workspaces';

/**
 * The application's environment: nothing of the repository's test settings (FERRY_*) leaks in;
 * `extra` is what the README's snippet reads (DATABASE_URL, queue and topic names, ...).
 */
export function appEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('FERRY_')));
  return {
    ...env,
    npm_config_offline: 'true',
    // Offline machines: `prisma generate` needs no schema engine, so any executable will do.
    PRISMA_SCHEMA_ENGINE_BINARY: path.join(ROOT, 'scripts/stub/schema-engine'),
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    ...extra,
  };
}

/** Runs one command line in the application; its stdout, or an error carrying both streams. */
export function runIn(appDir: string, env: NodeJS.ProcessEnv, command: string[]): string {
  const [file, ...args] = command as [string, ...string[]];
  try {
    return execFileSync(file, args, { cwd: appDir, env, encoding: 'utf8', stdio: 'pipe', timeout: 120_000 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    throw new Error(`${command.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** One of the application's programs, started in the background. */
export class AppProcess {
  readonly child: ChildProcess;
  private readonly output: string[] = [];
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(appDir: string, env: NodeJS.ProcessEnv, command: string[]) {
    const [file, ...args] = command as [string, ...string[]];
    this.child = spawn(file, args, { cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    this.child.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  get text(): string {
    return this.output.join('');
  }

  /** Resolves once `line` was printed; rejects if the process exits first or at the deadline. */
  waitForLine(line: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.child.stdout?.off('data', check);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () => done(new Error(`no "${line}" within ${timeoutMs} ms:\n${this.text}`)),
        timeoutMs,
      );
      const check = () => {
        if (this.text.includes(line)) done();
      };
      this.child.stdout?.on('data', check);
      void this.exited.then(({ code }) => {
        if (this.text.includes(line)) done();
        else done(new Error(`the program exited (${code}) before "${line}":\n${this.text}`));
      });
      check();
    });
  }

  /** Sends SIGTERM and resolves with how the process ended; SIGKILL and a rejection at the deadline. */
  async stop(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`the program did not stop within ${timeoutMs} ms:\n${this.text}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Polls `probe` until it returns a value other than undefined; rejects at the deadline. */
export async function eventually<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
