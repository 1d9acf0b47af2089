import type { InboxAcceptInput } from '../contracts';
import { FerryError, FerryValidationError } from '../errors';
import { translateDbError } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from '../transport/errors';
import { payloadFingerprint } from './fingerprint';
import { findByIdentity, type Identity } from './sql/findByIdentity';
import { scopeOf } from './sql/fragments';
import { insertReceipts, type NewReceipt } from './sql/insertReceipts';
import type { InboxRecord } from './types';
import { inputFault, type InputFault } from './validateInput';

export interface AcceptSettings {
  readonly maxPayloadBytes: number;
  readonly maxPendingMessages: number | null;
  readonly global: 'reject' | 'shared';
  readonly maxAttempts: number;
}

/** Per-input outcome with the full receipt (richer than the transport contract). */
export type AcceptOutcome =
  | { readonly kind: 'accepted'; readonly record: InboxRecord }
  | { readonly kind: 'duplicate'; readonly record: InboxRecord }
  | { readonly kind: 'conflict'; readonly record: InboxRecord; readonly reason: string }
  | {
      readonly kind: 'invalid';
      readonly code: string;
      readonly reason: string;
      /** Stable, from TRANSPORT_REJECT_REASONS: what a transport writes as its reject reason. */
      readonly rejectReason: TransportRejectReason;
    };

/** A new identity at the admission limit: not stored, retriable (InboxAdmissionRejectedError). */
export type Refused = {
  readonly kind: 'refused';
  readonly code: 'FERRY_ADMISSION_REJECTED';
  readonly reason: string;
};

export type BatchOutcome = AcceptOutcome | Refused;

type Prepared = { readonly index: number; readonly identity: Identity; readonly receipt: NewReceipt };
type Invalid = { readonly index: number } & InputFault;

/** Validates and serializes one input, or says why it is invalid. Pure. */
export function prepareInput(
  input: InboxAcceptInput,
  index: number,
  settings: AcceptSettings,
): Prepared | Invalid {
  const fault = inputFault(input);
  if (fault !== null) return { index, ...fault };
  if (input.tenantId === null && settings.global !== 'shared') {
    return {
      index,
      code: 'FERRY_GLOBAL_SCOPE_REJECTED',
      reason: "global messages need global: 'shared'",
      rejectReason: TRANSPORT_REJECT_REASONS.inboxInvalid,
    };
  }
  let payloadJson: string;
  try {
    payloadJson = JSON.stringify(input.payload);
  } catch {
    const reason = 'payload is not serializable JSON';
    return {
      index,
      code: 'FERRY_VALIDATION_FAILED',
      reason,
      rejectReason: TRANSPORT_REJECT_REASONS.inboxInvalid,
    };
  }
  const payloadBytes = Buffer.byteLength(payloadJson, 'utf8');
  if (payloadBytes > settings.maxPayloadBytes) {
    return {
      index,
      code: 'FERRY_PAYLOAD_TOO_LARGE',
      reason: `payload is ${payloadBytes} bytes; the limit is ${settings.maxPayloadBytes}`,
      rejectReason: TRANSPORT_REJECT_REASONS.payloadTooLarge,
    };
  }
  const identity = { scope: scopeOf(input.tenantId), consumer: input.consumer, messageId: input.messageId };
  const receipt: NewReceipt = {
    tenantId: input.tenantId,
    consumer: input.consumer,
    messageId: input.messageId,
    messageType: input.type ?? null,
    system: input.system ?? null,
    payloadJson,
    fingerprint: payloadFingerprint(JSON.parse(payloadJson)),
    payloadBytes,
    headersJson: JSON.stringify(input.headers ?? {}),
  };
  return { index, identity, receipt };
}

function keyOf(identity: Identity): string {
  return JSON.stringify([identity.scope, identity.consumer, identity.messageId]);
}

function classify(prepared: Prepared, record: InboxRecord, inserted: boolean): AcceptOutcome {
  if (inserted) return { kind: 'accepted', record };
  if (record.payloadFingerprint !== prepared.receipt.fingerprint) {
    return { kind: 'conflict', record, reason: 'message id reused with a different payload fingerprint' };
  }
  return { kind: 'duplicate', record };
}

function identityKeys(records: readonly InboxRecord[]): Set<string> {
  return new Set(
    records.map((r) => keyOf({ scope: scopeOf(r.tenantId), consumer: r.consumer, messageId: r.messageId })),
  );
}

function refusal(maxPendingMessages: number | null): Refused {
  return {
    kind: 'refused',
    code: 'FERRY_ADMISSION_REJECTED',
    reason: `inbox backlog reached maxPendingMessages (${maxPendingMessages})`,
  };
}

/**
 * The receipts of `unique` after the insert: found or inserted by the one insert statement
 * (which also checks admission), or, for an identity a concurrent batch committed meanwhile,
 * read back by a second statement.
 */
async function storedRecords(
  db: SqlExecutor,
  settings: AcceptSettings,
  unique: readonly Prepared[],
): Promise<{ byKey: Map<string, InboxRecord>; insertedKeys: Set<string>; refusal: Refused | null }> {
  const { admitted, inserted, existing } = await insertReceipts(
    db,
    unique.map((p) => p.receipt),
    settings.maxAttempts,
    settings.maxPendingMessages,
  );
  const insertedKeys = identityKeys(inserted);
  const known = identityKeys([...existing, ...inserted]);
  const missing = admitted ? unique.filter((p) => !known.has(keyOf(p.identity))) : [];
  const found = await findByIdentity(
    db,
    missing.map((p) => p.identity),
  );
  const byKey = new Map<string, InboxRecord>();
  for (const record of [...existing, ...found, ...inserted]) {
    byKey.set(
      keyOf({ scope: scopeOf(record.tenantId), consumer: record.consumer, messageId: record.messageId }),
      record,
    );
  }
  return { byKey, insertedKeys, refusal: admitted ? null : refusal(settings.maxPendingMessages) };
}

/**
 * Accepts a batch: invalid inputs are reported, valid ones are inserted in one statement
 * (identity conflicts skipped), existing receipts are read back and classified as duplicate
 * or fingerprint conflict. At the admission limit the new identities are `refused` (nothing
 * is inserted) while duplicates, conflicts and invalid inputs are still answered.
 */
export async function acceptBatch(
  db: SqlExecutor,
  inputs: readonly InboxAcceptInput[],
  settings: AcceptSettings,
): Promise<BatchOutcome[]> {
  if (!Array.isArray(inputs)) throw new FerryValidationError('inputs', 'acceptMany needs an array');
  const outcomes: BatchOutcome[] = new Array<BatchOutcome>(inputs.length);
  const valid: Prepared[] = [];
  inputs.forEach((input, index) => {
    const prepared = prepareInput(input, index, settings);
    if ('identity' in prepared) valid.push(prepared);
    else {
      const { code, reason, rejectReason } = prepared;
      outcomes[index] = { kind: 'invalid', code, reason, rejectReason };
    }
  });
  const first = new Map<string, Prepared>();
  for (const prepared of valid)
    if (!first.has(keyOf(prepared.identity))) first.set(keyOf(prepared.identity), prepared);
  try {
    const { byKey, insertedKeys, refusal } = await storedRecords(db, settings, [...first.values()]);
    for (const prepared of valid) {
      const key = keyOf(prepared.identity);
      const record = byKey.get(key);
      if (record) {
        outcomes[prepared.index] = classify(
          prepared,
          record,
          insertedKeys.has(key) && first.get(key) === prepared,
        );
      } else if (refusal) {
        outcomes[prepared.index] = refusal;
      } else {
        throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'a receipt vanished during acceptance');
      }
    }
  } catch (cause) {
    throw translateDbError(cause, 'inbox accept');
  }
  return outcomes;
}
