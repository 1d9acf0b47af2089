import type { InboxAcceptInput, InboxAcceptResult } from '../contracts';
import { FerryError, FerryValidationError, isFerryError, type FerryErrorCode } from '../errors';
import { ACCEPTANCE_FAILED_CODE, TRANSPORT_REJECT_REASONS, describeTransportError } from './errors';

/** The acceptor call being isolated: one result per input, in order, or a throw. */
export type AcceptManyFn = (inputs: readonly InboxAcceptInput[]) => Promise<readonly InboxAcceptResult[]>;

/**
 * Failures that are about the batch, never about one input: they are rethrown so the
 * transport retries the whole batch. FERRY_CLOSED and FERRY_SCHEMA_NOT_READY always (a table or
 * column the running ferry needs is missing, e.g. an upgrade deployed before `ferry migrate`:
 * no message is at fault, and each is accepted once the migration ran); the others only when
 * retriable (a non-retriable FERRY_DATABASE_UNAVAILABLE means PostgreSQL refused this data).
 */
const ALWAYS_BATCH_WIDE: ReadonlySet<FerryErrorCode> = new Set<FerryErrorCode>([
  'FERRY_CLOSED',
  'FERRY_SCHEMA_NOT_READY',
]);
const BATCH_WIDE: ReadonlySet<FerryErrorCode> = new Set<FerryErrorCode>([
  'FERRY_DATABASE_UNAVAILABLE',
  'FERRY_ADMISSION_REJECTED',
  'FERRY_TIMEOUT',
]);

export function isBatchWideFailure(error: unknown): boolean {
  if (!(error instanceof FerryError)) return false;
  if (ALWAYS_BATCH_WIDE.has(error.code)) return true;
  return BATCH_WIDE.has(error.code) && error.retriable;
}

/**
 * SQLSTATEs of a server out of resources that one statement's size can cause: insufficient
 * resources in general (53000) and out of memory (53200: also "out of shared memory", locks). Not
 * a full disk (53100), too many connections (53300) or a configuration limit (53400): a smaller
 * batch needs no fewer of those.
 */
const SIZE_STATES: ReadonlySet<string> = new Set(['53000', '53200']);

/**
 * A batch-wide failure that the batch's size may have caused: a statement past a deadline
 * (FERRY_TIMEOUT: statement_timeout, ferry's own, node-postgres's query_timeout) or a server out
 * of memory (SIZE_STATES). Offered again whole, such a batch can fail the same way for ever (its
 * deliveries, or the Kafka partition behind them, stalled for good), so a transport offers fewer
 * of its inputs next time (acceptHolding's OfferWindow, the Kafka consumer's shorter chunks).
 */
export function sizeMayCause(error: unknown): boolean {
  if (!(error instanceof FerryError)) return false;
  if (error.code === 'FERRY_TIMEOUT') return true;
  const sqlState = error.details.sqlState;
  return typeof sqlState === 'string' && SIZE_STATES.has(sqlState);
}

/**
 * The `invalid` result an input gets when accepting it alone still throws: a validation
 * failure (FerryValidationError, or any FerryError coded FERRY_VALIDATION_FAILED) keeps its
 * code, reason and rule (`details.rule`, as `rejectReason`; else `inbox_invalid`); any other
 * error is `acceptance_failed`, with its code (a FerryError's, else `acceptance_failed`) and
 * message.
 */
export function invalidFromError(error: unknown): InboxAcceptResult {
  if (error instanceof FerryValidationError || isFerryError(error, 'FERRY_VALIDATION_FAILED')) {
    const rule = error.details.rule;
    const rejectReason = typeof rule === 'string' ? rule : TRANSPORT_REJECT_REASONS.inboxInvalid;
    const reason = error instanceof FerryValidationError ? error.reason : error.message;
    return { kind: 'invalid', code: error.code, reason, rejectReason };
  }
  const rejectReason = TRANSPORT_REJECT_REASONS.acceptanceFailed;
  if (error instanceof FerryError)
    return { kind: 'invalid', code: error.code, reason: error.message, rejectReason };
  return {
    kind: 'invalid',
    code: ACCEPTANCE_FAILED_CODE,
    reason: describeTransportError(error),
    rejectReason,
  };
}

/**
 * Accepts a batch so that one bad input cannot fail its neighbours: `acceptMany` runs on the
 * whole batch; a batch-wide failure (see isBatchWideFailure) is rethrown; any other failure
 * splits the batch in halves, recursively, until the inputs that still throw alone are found,
 * and those become `invalid` results (invalidFromError). Every other input gets its own result.
 * Safety net: when every input failed alone and the first failure was a retriable FerryError
 * (e.g. FERRY_DATABASE_ERROR, a database error of unknown cause), nothing points at the inputs,
 * so that first error is rethrown and the transport retries the batch. A result count that
 * does not match the input count counts as a failure of that call.
 */
export async function acceptIsolated(
  inputs: readonly InboxAcceptInput[],
  acceptMany: AcceptManyFn,
): Promise<InboxAcceptResult[]> {
  if (inputs.length === 0) return [];
  try {
    return await acceptChecked(inputs, acceptMany);
  } catch (error) {
    if (isBatchWideFailure(error)) throw error;
    const failed = { count: 0 };
    const results = await bisect(inputs, acceptMany, error, failed);
    if (failed.count === inputs.length && error instanceof FerryError && error.retriable) throw error;
    return results;
  }
}

async function acceptChecked(
  inputs: readonly InboxAcceptInput[],
  acceptMany: AcceptManyFn,
): Promise<InboxAcceptResult[]> {
  const results = await acceptMany(inputs);
  if (results.length !== inputs.length) {
    throw new Error(`acceptMany returned ${results.length} results for ${inputs.length} inputs`);
  }
  return [...results];
}

/** `inputs` failed together with `error`: accepts each half on its own, down to single inputs. */
async function bisect(
  inputs: readonly InboxAcceptInput[],
  acceptMany: AcceptManyFn,
  error: unknown,
  failed: { count: number },
): Promise<InboxAcceptResult[]> {
  if (isBatchWideFailure(error)) throw error;
  if (inputs.length === 1) {
    failed.count += 1;
    return [invalidFromError(error)];
  }
  const middle = Math.ceil(inputs.length / 2);
  const halves = [inputs.slice(0, middle), inputs.slice(middle)];
  const results: InboxAcceptResult[] = [];
  for (const half of halves) {
    try {
      results.push(...(await acceptChecked(half, acceptMany)));
    } catch (halfError) {
      results.push(...(await bisect(half, acceptMany, halfError, failed)));
    }
  }
  return results;
}
