/**
 * A relay process of `relay-processes-xN` ends when the bench that forked it is gone (killed, or
 * ended without telling it): it must not stay behind holding a pool and, once started, claims.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const RUN = path.join(__dirname, '..', 'run.js');
const DATABASE_URL = process.env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** A parent that forks one relay child, starts its warm-up relay once it is ready, prints its pid, then waits. */
const PARENT = `
const { fork } = require('node:child_process');
const child = fork(${JSON.stringify(RUN)}, [], {
  env: { ...process.env, BENCH_CHILD: 'relay', BENCH_CHILD_DB: ${JSON.stringify(DATABASE_URL)} },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
child.on('message', (message) => {
  if (message && message.kind === 'ready') {
    child.send('warm');
    console.log(child.pid);
  }
});
setInterval(() => {}, 1000);
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a relay child running its relay exits once its parent is killed', async () => {
  const parent = spawn(process.execPath, ['-e', PARENT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const childPid = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the relay child never said ready')), 60_000);
    parent.stdout.on('data', (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(Number(chunk.toString().trim()));
    });
  });
  expect(alive(childPid)).toBe(true);
  parent.kill('SIGKILL');
  const deadline = Date.now() + 15_000;
  while (alive(childPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const left = alive(childPid);
  if (left) process.kill(childPid, 'SIGKILL');
  // Before: it stayed, re-parented to init, holding its pool.
  expect(left).toBe(false);
}, 90_000);
