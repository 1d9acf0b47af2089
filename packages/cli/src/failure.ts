import { isFerryError } from '@ferry/core';
import { describeError } from '@ferry/core/transport';
import type { Context } from './command';
import { answerFor } from './errors';
import { printActionText, printJson, printNote, type ActionAnswer } from './output';

/**
 * A failure after part of a command's work was done. `done` is what was applied before it (the
 * ids a bulk command's earlier batches committed), `requestId` the request id a replay used (made
 * up when `--request-id` was not given): the answer prints them with the error, so the operator
 * knows what changed and can retry idempotently.
 */
export class FailedPartway extends Error {
  constructor(
    readonly failure: unknown,
    readonly context: {
      readonly done?: ActionAnswer;
      readonly requestId?: string;
      /** What a command that is no mutation (migrate) did before the failure: --json's fields beside `error`. */
      readonly answered?: Readonly<Record<string, unknown>>;
    },
  ) {
    // Its own message is never shown (printFailure answers `failure`): redacted, never throwing.
    super(describeError(failure));
    this.name = 'FailedPartway';
  }
}

function appliedSomething(answer: ActionAnswer): boolean {
  return answer.results.length > 0 || Object.values(answer.counts).some((n) => n > 0);
}

/**
 * Runs `work`; when it fails after something was applied, the failure carries `soFar()` (the
 * answer up to that point) as a FailedPartway.
 */
export async function keepingDone<T>(soFar: () => ActionAnswer, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const done = soFar();
    throw appliedSomething(done) ? new FailedPartway(error, { done }) : error;
  }
}

/**
 * The request id of a failed replay; a retry with it is advised when one can succeed: the
 * failure is retriable (a timeout, an outage) or the outcome unknown (a retry is then a duplicate
 * if the first landed). A refusal (not found, a conflict) would be refused again.
 */
function requestNote(requestId: string, failure: unknown): string {
  const retry = isFerryError(failure) && (failure.retriable || failure.code === 'FERRY_OUTCOME_UNKNOWN');
  return retry ? `request id ${requestId}: retry with --request-id ${requestId}` : `request id ${requestId}`;
}

/**
 * The answer of a failed command: `{ error: { code, message, hint, requestId? } }` under --json,
 * with the fields of the mutation answer applied before the failure (`action`, `dryRun`,
 * `results`, `counts`) when there were some; else the applied outcomes, then the error and hint
 * on stderr. Returns the exit code: 2 for a usage error, else 1.
 */
/**
 * `helpFor`: the command whose `--help` a usage mistake is pointed at (default `command`);
 * `sources`: where a value core refused came from when no flag gave it (answerFor).
 */
export function printFailure(
  ctx: Context,
  command: string,
  error: unknown,
  parseError: string,
  helpFor: string = command,
  sources: Readonly<Record<string, string>> = {},
): 1 | 2 {
  const partway = error instanceof FailedPartway ? error.context : {};
  const failure = error instanceof FailedPartway ? error.failure : error;
  const answer = answerFor(failure, partway.done !== undefined, sources);
  const message = parseError.replace(/^error: /, '') || answer.message;
  const hint = answer.code === 'FERRY_USAGE' ? `see \`${helpFor} --help\`` : answer.hint;
  const { done } = partway;
  // A usage error sent nothing: no request to name, nor to retry.
  const requestId = answer.exitCode === 2 ? undefined : partway.requestId;
  if (ctx.json) {
    const failure = { code: answer.code, message, hint, ...(requestId === undefined ? {} : { requestId }) };
    printJson(ctx, { ...done, ...partway.answered, error: failure });
    return answer.exitCode;
  }
  if (done !== undefined) printActionText(ctx, done, ' before the failure');
  printNote(ctx, `${command}: ${answer.code}: ${message}`);
  if (requestId !== undefined) printNote(ctx, requestNote(requestId, failure));
  printNote(ctx, `hint: ${hint}`);
  return answer.exitCode;
}
