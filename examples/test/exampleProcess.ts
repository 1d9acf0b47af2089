/** An example's `src/main.ts` run as its README runs it: a `node` process of its own, with a deadline. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REGISTER_TS } from '../../test-support/registerTs';

export interface ExampleExit {
  /** null when the process was still running at the deadline (then killed). */
  readonly code: number | null;
  readonly output: string;
}

/**
 * Runs `examples/<example>/src/main.ts` against ferry's sources with `env` added, and resolves
 * once it exited, or after `deadlineMs` with `code: null` (the process is then killed).
 */
export function runExampleProcess(
  example: string,
  env: Record<string, string>,
  deadlineMs: number,
): Promise<ExampleExit> {
  const examples = path.resolve(__dirname, '..');
  const child = spawn(process.execPath, ['-r', REGISTER_TS, path.join(examples, example, 'src/main.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => void output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void output.push(chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ code: null, output: output.join('') });
    }, deadlineMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.join('') });
    });
  });
}
