import type { InboxAcceptInput } from '../contracts';
import { FerryError, FerryValidationError } from '../errors';
import { translateDbError } from '../sql/dbErrors';
import type { Logger } from '../observe/logger';
import type { SqlExecutor } from '../sql/executor';
import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from '../transport/errors';
import { canonicalTextFingerprint } from './fingerprint';
import { findByIdentity, type Identity } from './sql/findByIdentity';
import { scopeOf, type ReceiptShape } from './sql/fragments';
import { insertReceipts, type NewReceipt } from './sql/insertReceipts';
import type { InboxRecord, ReceiptKey } from './types';
import {
  acceptFields,
  inputFault,
  invalidInput,
  payloadText,
  readInputs,
  thrownDetail,
  UnreadableInput,
  type InputFault,
} from './validateInput';

export interface AcceptSettings {
  readonly maxPayloadBytes: number;
  readonly maxPendingMessages: number | null;
  readonly global: 'reject' | 'shared';
  readonly maxAttempts: number;
  /** The inbox's logger: an unclassified failure of the acceptance is logged there (translateDbError). */
  readonly logger?: Logger;
}

/**
 * Per-input outcome with the receipt (richer than the transport contract): the full receipt,
 * or only its key when read with RECEIPT_KEYS.
 */
export type AcceptOutcome<R extends ReceiptKey = InboxRecord> =
  | { readonly kind: 'accepted'; readonly record: R }
  | { readonly kind: 'duplicate'; readonly record: R }
  | { readonly kind: 'conflict'; readonly record: R; readonly reason: string }
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

export type BatchOutcome<R extends ReceiptKey = InboxRecord> = AcceptOutcome<R> | Refused;

type Prepared = {
  readonly index: number;
  readonly identity: Identity;
  /** keyOf(identity), computed once. */
  readonly key: string;
  readonly receipt: NewReceipt;
};
type Invalid = { readonly index: number } & InputFault;

/**
 * Validates and serializes one input, or says why it is invalid. Pure. An input whose value
 * throws as it is read (a getter, a Proxy trap) is invalid alone, never the batch's error.
 */
export function prepareInput(input: unknown, index: number, settings: AcceptSettings): Prepared | Invalid {
  const unreadable = (detail: string): Invalid => ({
    index,
    ...invalidInput(`input could not be read: ${detail}`.slice(0, 300)),
  });
  if (input instanceof UnreadableInput) return unreadable(input.detail);
  try {
    return readInput(input, index, settings);
  } catch (error) {
    return unreadable(thrownDetail(error));
  }
}

function readInput(given: unknown, index: number, settings: AcceptSettings): Prepared | Invalid {
  const input = acceptFields(given);
  if (input === null) return { index, ...invalidInput('input must be an object') };
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
  const payload = payloadText(input.payload, settings.maxPayloadBytes);
  if (!('json' in payload)) return { index, ...payload };
  const { json: payloadJson, bytes: payloadBytes } = payload;
  const identity = { scope: scopeOf(input.tenantId), consumer: input.consumer, messageId: input.messageId };
  const key = keyOf(identity.scope, identity.consumer, identity.messageId);
  const receipt: NewReceipt = {
    tenantId: input.tenantId,
    consumer: input.consumer,
    messageId: input.messageId,
    messageType: input.type ?? null,
    system: input.system ?? null,
    payloadJson,
    // The checked values' fingerprint, never the application's object read again: payloadText
    // writes the canonical text.
    fingerprint: canonicalTextFingerprint(payloadJson),
    payloadBytes,
    headersJson: JSON.stringify(input.headers ?? {}),
  };
  return { index, identity, key, receipt };
}

/**
 * One string per identity. NUL cannot occur in any part (validation refuses it in input text,
 * PostgreSQL text cannot hold it), so joining on it is unambiguous.
 */
function keyOf(scope: string, consumer: string, messageId: string): string {
  return `${scope}\u0000${consumer}\u0000${messageId}`;
}

function recordKey(record: ReceiptKey): string {
  return keyOf(scopeOf(record.tenantId), record.consumer, record.messageId);
}

function classify<R extends ReceiptKey>(prepared: Prepared, record: R, inserted: boolean): AcceptOutcome<R> {
  if (inserted) return { kind: 'accepted', record };
  if (record.payloadFingerprint !== prepared.receipt.fingerprint) {
    return { kind: 'conflict', record, reason: 'message id reused with a different payload fingerprint' };
  }
  return { kind: 'duplicate', record };
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
async function storedRecords<R extends ReceiptKey>(
  db: SqlExecutor,
  settings: AcceptSettings,
  unique: readonly Prepared[],
  shape: ReceiptShape<R>,
): Promise<{ byKey: Map<string, R>; insertedKeys: Set<string>; refusal: Refused | null }> {
  const { admitted, inserted, existing } = await insertReceipts(
    db,
    unique.map((p) => p.receipt),
    settings,
    shape,
  );
  const byKey = new Map<string, R>();
  for (const record of existing) byKey.set(recordKey(record), record);
  const insertedKeys = new Set<string>();
  for (const record of inserted) {
    const key = recordKey(record);
    insertedKeys.add(key);
    byKey.set(key, record);
  }
  const missing = admitted ? unique.filter((p) => !byKey.has(p.key)) : [];
  const found = await findByIdentity(
    db,
    missing.map((p) => p.identity),
    shape,
  );
  for (const record of found) byKey.set(recordKey(record), record);
  return { byKey, insertedKeys, refusal: admitted ? null : refusal(settings.maxPendingMessages) };
}

/**
 * Accepts a batch: invalid inputs are reported, valid ones are inserted in one statement
 * (identity conflicts skipped), existing receipts are read back and classified as duplicate
 * or fingerprint conflict. At the admission limit the new identities are `refused` (nothing
 * is inserted) while duplicates, conflicts and invalid inputs are still answered.
 */
export async function acceptBatch<R extends ReceiptKey>(
  db: SqlExecutor,
  inputs: readonly InboxAcceptInput[],
  settings: AcceptSettings,
  shape: ReceiptShape<R>,
  read: 'read' | 'unread' = 'unread',
): Promise<BatchOutcome<R>[]> {
  if (!Array.isArray(inputs)) throw new FerryValidationError('inputs', 'acceptMany needs an array');
  const outcomes: BatchOutcome<R>[] = new Array<BatchOutcome<R>>(inputs.length);
  const valid: Prepared[] = [];
  // Every index (a hole is invalid, not skipped), each input read once (readInputs): `read` when
  // the caller hands over readInputs' own copies in an array of its own (the Inbox does), which a
  // second reading would only copy again.
  (read === 'read' ? (inputs as readonly unknown[]) : readInputs(inputs)).forEach((input, index) => {
    const prepared = prepareInput(input, index, settings);
    if ('identity' in prepared) valid.push(prepared);
    else {
      const { code, reason, rejectReason } = prepared;
      outcomes[index] = { kind: 'invalid', code, reason, rejectReason };
    }
  });
  const first = new Map<string, Prepared>();
  for (const prepared of valid) if (!first.has(prepared.key)) first.set(prepared.key, prepared);
  try {
    const { byKey, insertedKeys, refusal } = await storedRecords(db, settings, [...first.values()], shape);
    for (const prepared of valid) {
      const key = prepared.key;
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
    throw translateDbError(cause, 'inbox accept', undefined, settings.logger);
  }
  return outcomes;
}
