/**
 * The budget of the model-based concurrency tests (packages/core/test/{outbox,inbox}/model.test.ts):
 * a fixed seed, a small number of runs and commands per run, all overridable from the
 * environment so that a failure can be replayed exactly.
 *
 *   FERRY_MODEL_SEED      seed of the first run (default 20261201)
 *   FERRY_MODEL_RUNS      command sequences tried (default 30)
 *   FERRY_MODEL_COMMANDS  commands per sequence at most (default 40)
 *   FERRY_MODEL_PATH      fast-check `path` printed with a failure, and
 *   FERRY_MODEL_REPLAY    the `replayPath` printed in the counterexample's comment: together they
 *                         replay the shrunk failing sequence at once (with the same seed)
 */
import fc from 'fast-check';

export interface ModelBudget {
  readonly seed: number;
  readonly numRuns: number;
  readonly maxCommands: number;
  readonly path: string | undefined;
  /** For fc.commands({ replayPath }): which of the generated commands ran (shrinking needs it). */
  readonly replayPath: string | undefined;
}

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got ${raw}`);
  return value;
}

export function modelBudget(): ModelBudget {
  return {
    seed: intFromEnv('FERRY_MODEL_SEED', 20261201),
    numRuns: intFromEnv('FERRY_MODEL_RUNS', 30),
    maxCommands: intFromEnv('FERRY_MODEL_COMMANDS', 40),
    path: process.env.FERRY_MODEL_PATH || undefined,
    replayPath: process.env.FERRY_MODEL_REPLAY || undefined,
  };
}

/** The fc.commands constraints of a budget: its length, and the replay path when replaying. */
export function commandsConstraints(budget: ModelBudget): {
  maxCommands: number;
  size: 'max';
  replayPath?: string;
} {
  return {
    maxCommands: budget.maxCommands,
    size: 'max',
    ...(budget.replayPath === undefined ? {} : { replayPath: budget.replayPath }),
  };
}

/** Generation and shrinking stop after this long; the runs done so far count. */
const TIME_LIMIT_MS = 60_000;

/**
 * Runs `property` within the budget. On failure the seed and the variables that replay it are
 * printed before fast-check's report (the shrunk command sequence) is rethrown.
 */
export async function assertModel<Ts extends unknown[]>(
  name: string,
  property: fc.IAsyncPropertyWithHooks<Ts>,
  budget: ModelBudget,
): Promise<void> {
  try {
    await fc.assert(property, {
      seed: budget.seed,
      numRuns: budget.numRuns,
      ...(budget.path === undefined ? {} : { path: budget.path }),
      interruptAfterTimeLimit: TIME_LIMIT_MS,
      markInterruptAsFailure: false,
    });
  } catch (error) {
    process.stderr.write(
      `model ${name} failed: seed ${budget.seed} (FERRY_MODEL_SEED=${budget.seed} ` +
        `FERRY_MODEL_RUNS=${budget.numRuns} FERRY_MODEL_COMMANDS=${budget.maxCommands} replays it)\n`,
    );
    throw error;
  }
}

/**
 * Runs the heal phase that ends every sequence; a violation found there says so, since the
 * counterexample fast-check prints ends before it.
 */
export async function healPhase(heal: () => Promise<void>): Promise<void> {
  try {
    await heal();
  } catch (error) {
    if (error instanceof Error) error.message = `in the heal phase after the sequence: ${error.message}`;
    throw error;
  }
}
