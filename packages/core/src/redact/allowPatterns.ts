import vm from 'node:vm';
import { safeRegex } from 'safe-regex2';

/**
 * How long the `redact.allow` RegExps may take, together, on one error text. Past it they are
 * abandoned for that text: nothing is kept, the rules redact it as if no pattern had matched.
 */
export const ALLOW_PATTERNS_BUDGET_MS = 100;

/**
 * Whether `pattern` may be an allow pattern: no nested quantifiers (star height 1, as `(a+)+`
 * has 2) and at most 25 quantifiers, checked by safe-regex2, which also refuses what its parser
 * cannot read (a lookbehind; an allow pattern needs none: the text it matches is kept as a
 * whole). This refuses the classic catastrophic patterns at configuration; the time budget
 * bounds the rest (an exponential alternation such as `(a|a)*` has star height 1).
 */
export function isSafeAllowPattern(pattern: RegExp): boolean {
  return safeRegex(pattern);
}

/**
 * The one context allow patterns run in. A RegExp cannot be interrupted from JavaScript, but
 * the watchdog of a vm call with a `timeout` terminates whatever the call runs, a RegExp's
 * backtracking included, and Node turns that into an error at the call.
 */
const sandbox = vm.createContext({ task: (): unknown => undefined });
const runTask = new vm.Script('task()');

/**
 * Runs `task` for at most `budgetMs`; returns undefined when it took longer (it was stopped).
 * Costs about a quarter of a millisecond (the watchdog's thread), so only the redaction of an
 * application with allow patterns pays it.
 */
export function withinBudget<T>(task: () => T, budgetMs: number = ALLOW_PATTERNS_BUDGET_MS): T | undefined {
  const previous = sandbox.task;
  sandbox.task = task;
  try {
    return runTask.runInContext(sandbox, { timeout: budgetMs }) as T;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return undefined;
    throw error;
  } finally {
    sandbox.task = previous;
  }
}
