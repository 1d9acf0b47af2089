/** A real child `node` process running a TypeScript fixture, with its stdout lines collected. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { waitFor } from './support';
import { REGISTER_TS } from '../../test-support/registerTs';

export interface RunningChild {
  readonly process: ChildProcess;
  readonly lines: string[];
  readonly stderr: string[];
  /** Resolves with the exit code and signal once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  waitForLine(what: string, match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
}

export function startFixture(
  fixture: string,
  args: string[],
  env: Record<string, string> = {},
): RunningChild {
  const fixtures = path.join(__dirname, 'fixtures');
  const child = spawn(process.execPath, ['-r', REGISTER_TS, path.join(fixtures, fixture), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void stderr.push(chunk));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return {
    process: child,
    lines,
    stderr,
    exited,
    hasExited: () => done,
    // A child transpiles ferry's sources before its first line: 43 s on a loaded 2-core machine.
    waitForLine: (what, match, timeoutMs = 120_000) =>
      waitFor(
        what,
        () => {
          if (done && !lines.some(match)) {
            throw new Error(`the child exited; stderr: ${stderr.join('').slice(-2000)}`);
          }
          return lines.find(match);
        },
        timeoutMs,
      ),
  };
}

/** Kills a child that is still running (cleanup after a failed scenario). */
export async function stopChild(child: RunningChild | undefined): Promise<void> {
  if (!child || child.hasExited()) return;
  child.process.kill('SIGKILL');
  await child.exited;
}
