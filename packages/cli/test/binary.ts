import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** The real binary, as `npx ferry` runs it (build first: `npx tsc -b packages/cli`). */
export const MAIN = path.join(__dirname, '..', 'dist', 'main.js');

/** How a run of the binary ended: its exit code, or the signal that killed it ('hung': killed by the test). */
export interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly hung: boolean;
}

export interface BinaryRun {
  readonly child: ChildProcess;
  readonly stdout: () => string[];
  readonly stderr: () => string[];
  /** Resolves true once a stderr line matches `pattern`, false if the process ended or `ms` passed first. */
  stderrLine(pattern: RegExp, ms: number): Promise<boolean>;
  /** How it ended; a process still running after `ms` is killed (SIGKILL) and reported `hung`. */
  ended(ms: number): Promise<Ended>;
}

function linesOf(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** Runs `ferry argv...` as a child process with FERRY_ACTOR set; `nodeArgs` go to node itself. */
export function runBinary(argv: readonly string[], nodeArgs: readonly string[] = []): BinaryRun {
  const child = spawn(process.execPath, [...nodeArgs, MAIN, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FERRY_ACTOR: 'ops@test' },
  });
  let stdout = '';
  let stderr = '';
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    child,
    stdout: () => linesOf(stdout),
    stderr: () => linesOf(stderr),
    stderrLine: (pattern, ms) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => finish(false), ms);
        const check = (): void => {
          if (linesOf(stderr).some((line) => pattern.test(line))) finish(true);
        };
        function finish(found: boolean): void {
          clearTimeout(timer);
          child.stderr?.off('data', check);
          resolve(found);
        }
        child.stderr?.on('data', check);
        void exit.then(() => finish(linesOf(stderr).some((line) => pattern.test(line))));
        check();
      }),
    ended: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
      const first = await Promise.race([exit, late]);
      clearTimeout(timer);
      if (first !== 'late') return { ...first, hung: false };
      child.kill('SIGKILL');
      return { ...(await exit), hung: true };
    },
  };
}
