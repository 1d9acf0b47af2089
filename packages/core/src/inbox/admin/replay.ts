import type { SqlExecutor } from '../../sql/executor';
import {
  InboxNotFoundError,
  InboxReplayConflictError,
  InboxStateConflictError,
  REPLAY_PAYLOAD_PURGED,
} from '../errors';
import { getReceipt } from '../sql/getReceipt';
import { findByIdentity } from '../sql/findByIdentity';
import { RECEIPT_KEYS } from '../sql/fragments';
import { REPLAY_MESSAGE_ID_PREFIX } from '../messageIds';
import { findReplay, insertReplay, type ReplayRequest } from '../sql/insertReplay';
import type { InboxRecord } from '../types';

export type InboxReplayOutcome =
  | { readonly kind: 'accepted'; readonly record: InboxRecord }
  | { readonly kind: 'duplicate'; readonly record: InboxRecord };

/**
 * The arguments of `request` that name another replay than `existing`: what is replayed, where,
 * and why. Not the actor: who asks is not what is asked (a retry from a second shell or host, or by
 * whoever took the incident over, is the same request; each call is audited under its own actor,
 * and the lineage keeps the one that created the replay). Review 123.
 */
function differing(existing: InboxRecord, request: ReplayRequest): string[] {
  const lineage = existing.replay;
  const fields: Array<[string, boolean]> = [
    ['id', lineage?.sourceId === request.sourceId],
    ['expectedVersion', lineage?.sourceVersion === request.expectedVersion],
    ['targetConsumer', existing.consumer === request.targetConsumer],
    ['reason', lineage?.reason === request.reason],
  ];
  return fields.filter(([, same]) => !same).map(([name]) => name);
}

function existingOutcome(existing: InboxRecord, request: ReplayRequest): InboxReplayOutcome {
  const changed = differing(existing, request);
  if (changed.length > 0) throw new InboxReplayConflictError(request.requestId, existing.id, changed);
  return { kind: 'duplicate', record: existing };
}

/**
 * Idempotent by (scope, request id): an existing replay with the same arguments is returned
 * as `duplicate` (even after the source payload was purged); with other arguments it is a
 * replay conflict. Otherwise the source must be COMPLETED, at the observed version, with its
 * payload retained.
 */
export async function replayCompleted(db: SqlExecutor, request: ReplayRequest): Promise<InboxReplayOutcome> {
  const earlier = await findReplay(db, request.scope, request.requestId);
  if (earlier) return existingOutcome(earlier, request);
  const inserted = await insertReplay(db, request);
  if (inserted) return { kind: 'accepted', record: inserted };
  const concurrent = await findReplay(db, request.scope, request.requestId);
  if (concurrent) return existingOutcome(concurrent, request);
  const source = await getReceipt(db, request.scope, request.sourceId);
  if (!source) throw new InboxNotFoundError(request.sourceId);
  const actual = { status: source.status, rowVersion: source.rowVersion };
  if (source.status !== 'COMPLETED')
    throw new InboxStateConflictError(source.id, 'replay requires a COMPLETED record', actual);
  // Before the version: no version of a purged source can be replayed, and the purge itself moved
  // the version on, so an operator replaying at the version listed before it was told to act on the
  // current version, which could not succeed either (review 134).
  if (source.payload === null) {
    throw new InboxStateConflictError(source.id, REPLAY_PAYLOAD_PURGED, actual);
  }
  if (source.rowVersion !== request.expectedVersion) {
    throw new InboxStateConflictError(source.id, `expected version ${request.expectedVersion}`, actual);
  }
  // The replay's identity is taken: only by a receipt accepted before ferry reserved its prefix.
  const messageId = `${REPLAY_MESSAGE_ID_PREFIX}${request.requestId}`;
  const [holder] = await findByIdentity(
    db,
    [{ scope: request.scope, consumer: request.targetConsumer, messageId }],
    RECEIPT_KEYS,
  );
  throw new InboxStateConflictError(
    source.id,
    `the replay's message id ${messageId} is taken by receipt ${holder?.id ?? '(gone)'}; use another request id`,
    actual,
  );
}
