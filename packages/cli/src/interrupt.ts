/** The signals an operator stops a command with: Ctrl-C, and `kill` / a supervisor's stop. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM'];

/** 128 + the signal's number, a shell's exit code for a process that signal ended. */
export const INTERRUPTED_EXIT: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** What a command says when a signal arrives (nothing by default). */
export interface Interruption {
  /** At the first signal, before `stop` aborts. */
  readonly first?: (signal: StopSignal) => void;
  /** At a second signal, before the process exits with INTERRUPTED_EXIT[signal]. */
  readonly again?: (signal: StopSignal) => void;
}

/** Where to see what was applied, after a second signal left the answer unprinted. */
export const AUDIT_HINT = '`ferry audit list` shows what was applied';

/**
 * The notes of a mutating command (`ferry <action>`) on stderr, `say`, when a signal arrives: the
 * first says it stops after the change in flight, a second that it exits at once and where to see
 * what was applied (`lookHere`).
 */
export function stopNotes(say: (line: string) => void, action: string, lookHere = AUDIT_HINT): Interruption {
  return {
    first: (signal) =>
      say(`ferry ${action}: ${signal}: stopping after the change in flight (again to exit at once)`),
    again: (signal) => say(`ferry ${action}: ${signal} again: exiting at once; ${lookHere}`),
  };
}

/**
 * Runs `work` with SIGINT and SIGTERM taken over: the CLI's one handling of them. The first aborts
 * `stop` (its reason the signal's name, a StopSignal): `work` starts nothing new, lets what is in
 * flight finish (each statement and transaction has its deadline) and answers with what it did. A
 * second exits at once (130 / 143): the operator insists. Outside `work` the signals end the
 * process as Node does. Every mutating command runs under it: the bulk ones (bulk.ts) stop between
 * ids, batches or passes, `migrate` between migrations, and `inbox replay` (one change) answers
 * the change in flight.
 */
export async function untilInterrupted<T>(
  work: (stop: AbortSignal) => Promise<T>,
  { first, again }: Interruption = {},
): Promise<T> {
  const stopping = new AbortController();
  const onSignal = (signal: StopSignal): void => {
    if (stopping.signal.aborted) {
      again?.(signal);
      process.exit(INTERRUPTED_EXIT[signal]);
    }
    first?.(signal);
    stopping.abort(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  try {
    return await work(stopping.signal);
  } finally {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
  }
}

/** The signal that aborted `stop` (untilInterrupted's), undefined while it has not. */
export function stoppedBy(stop: AbortSignal): StopSignal | undefined {
  return stop.aborted ? (stop.reason as StopSignal) : undefined;
}
