import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ChildMessage, ParentMessage } from '../relayChild';
import { OutboxBench, waitUntil } from '../outbox';
import { timed, type Scenario } from '../runner';
import { BATCH_SIZE } from '../env';

const RUN = path.join(__dirname, '..', '..', 'run.js');
/**
 * Warm-up per relay process, drained (not timed) before the measured backlog: WARM_UP_CYCLES full
 * batches. Counted in cycles because what V8 must have compiled before the clock starts is the
 * per-cycle code (claim, publish, completion), not only the per-event code: with 2,000 events a
 * process (4 cycles at the default batch) a CPU profile (perf, 2026-12-05) found 38% of the eight
 * processes' measured CPU in V8's compilers and unoptimized code, against 15% in the single
 * relay's; with 20 cycles, 14-18% against 12%.
 */
const WARM_UP_CYCLES = 20;
const WARM_UP_PER_PROCESS = WARM_UP_CYCLES * BATCH_SIZE;

/** Full batches each relay process drains, at least, in a timed drain (the backlog is sized for it). */
const MEASURED_CYCLES = 25;

/** Waits for the child's next message of `kind`; rejects on an error report or an early exit. */
function next(child: ChildProcess, kind: ChildMessage['kind']): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildMessage) => {
      if (message.kind === 'error') reject(new Error(`relay process: ${message.error}`));
      else if (message.kind === kind) resolve(message);
      else return;
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`relay process exited (${code}) before '${kind}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * `processes` relay processes drain the same backlog of `n` events; timed from 'go' until this
 * process saw no row PENDING or PROCESSING (one count every 20 ms, whatever the number of relays).
 * Before it, not timed, the same processes drain a warm-up backlog of WARM_UP_PER_PROCESS events
 * each (relayChild.ts says why).
 */
async function drainWithProcesses(bench: OutboxBench, processes: number, n: number) {
  const children = Array.from({ length: processes }, () =>
    fork(RUN, [], {
      env: { ...process.env, BENCH_CHILD: 'relay', BENCH_CHILD_DB: bench.database.url },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const tell = (message: ParentMessage) => {
    for (const child of children) child.send(message);
  };
  const drained = () => waitUntil(async () => (await bench.countOpen()) === 0, 600_000, 20);
  try {
    await Promise.all(children.map((child) => next(child, 'ready')));
    await bench.backlog(WARM_UP_PER_PROCESS * processes, 'bench');
    const warmed = children.map((child) => next(child, 'warmed'));
    tell('warm');
    await drained();
    tell('stop');
    await Promise.all(warmed);
    await bench.backlog(n, 'bench');
    const sample = await timed(async () => {
      tell('go');
      await drained();
      return { ops: n, verified: true };
    });
    const done = children.map((child) => next(child, 'done'));
    tell('stop');
    const reports = await Promise.all(done);
    const sent = reports.reduce((total, r) => total + (r.kind === 'done' ? r.sent : 0), 0);
    const sum = (field: 'cpuMs' | 'claims' | 'emptyClaims') =>
      reports.reduce((total, r) => total + (r.kind === 'done' ? r[field] : 0), 0);
    const cpuMs = sum('cpuMs');
    const per1k = (count: number) => (count / n) * 1000;
    const extra: Record<string, number> = {
      // PostgreSQL's CPU across the timed drain (Linux only), as timed() measures it.
      ...sample.extra,
      // The relay processes' own CPU (user + system) per 1,000 events, in place of the bench
      // process's (which only watches).
      nodeCpuMsPer1k: per1k(cpuMs),
      // Cycles that claimed rows, and those that found none (a relay idles a poll interval after one).
      claimsPer1k: per1k(sum('claims')),
      emptyClaimsPer1k: per1k(sum('emptyClaims')),
    };
    return { ...sample, extra, verified: sent === n && (await bench.allSent(n)) };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

/**
 * Relay processes: `processes` separate relay processes (each `start()`, a node-postgres pool of
 * 4 through fromPg, the in-memory publisher) vs 1 process on the same backlog: claim contention
 * across processes, with their CPU cost on the same 2 cores included.
 */
export function relayProcesses(processes: number): Scenario {
  return {
    name: `relay-processes-x${processes}`,
    unit: 'events/s',
    better: 'higher',
    baselineLabel: '1 relay process, in-memory publisher',
    subjectLabel: `${processes} relay processes, in-memory publisher`,
    targets: [{ on: 'ratio', bound: 1 }], // more relay processes never drain slower than one
    // One relay drains 2,000 events in about 0.1 s, close to the watcher's 20 ms step: five
    // times the run's N keeps that step within a few percent of the drain. And at least
    // MEASURED_CYCLES full batches per process: at five times N (10,000 events) eight processes
    // ran 2-3 cycles each, so the figure was their simultaneous start and last empty claims, not
    // their contention (bench/README.md, 2026-12-06 13:40).
    n: (runN) => Math.max(runN * 5, processes * MEASURED_CYCLES * BATCH_SIZE),
    async open() {
      const bench = await OutboxBench.open();
      return {
        baseline: (n) => drainWithProcesses(bench, 1, n),
        subject: (n) => drainWithProcesses(bench, processes, n),
        close: () => bench.close(),
      };
    },
  };
}
