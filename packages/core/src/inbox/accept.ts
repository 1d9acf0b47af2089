import type { InboxAcceptInput } from '../contracts';
import { FerryError } from '../errors';
import type { SqlExecutor } from '../sql/executor';
import { payloadFingerprint } from './fingerprint';
import { countBacklog } from './sql/countBacklog';
import { findByIdentity, type Identity } from './sql/findByIdentity';
import { scopeOf } from './sql/fragments';
import { insertReceipts, type NewReceipt } from './sql/insertReceipts';
import type { InboxRecord } from './types';

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
  | { readonly kind: 'invalid'; readonly code: string; readonly reason: string };

type Prepared = { readonly index: number; readonly identity: Identity; readonly receipt: NewReceipt };
type Invalid = { readonly index: number; readonly code: string; readonly reason: string };

const MAX_NAME = 200;
const MAX_MESSAGE_ID = 255;

function text(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateShape(input: InboxAcceptInput): string | null {
  if (!isPlainObject(input)) return 'input must be an object';
  if (!text(input.consumer, MAX_NAME)) return `consumer must be a string of 1..${MAX_NAME} characters`;
  if (!text(input.messageId, MAX_MESSAGE_ID))
    return `messageId must be a string of 1..${MAX_MESSAGE_ID} characters`;
  if (input.tenantId !== null && !text(input.tenantId, MAX_NAME)) {
    return `tenantId must be null or a string of 1..${MAX_NAME} characters`;
  }
  if (!isPlainObject(input.payload)) return 'payload must be a JSON object';
  if (input.headers !== undefined) {
    if (!isPlainObject(input.headers)) return 'headers must be an object of strings';
    if (Object.values(input.headers).some((v) => typeof v !== 'string'))
      return 'header values must be strings';
  }
  if (input.type !== undefined && input.type !== null && !text(input.type, MAX_NAME))
    return 'type must be a string';
  return null;
}

/** Validates and serializes one input, or says why it is invalid. Pure. */
export function prepareInput(
  input: InboxAcceptInput,
  index: number,
  settings: AcceptSettings,
): Prepared | Invalid {
  const shape = validateShape(input);
  if (shape !== null) return { index, code: 'FERRY_VALIDATION_FAILED', reason: shape };
  if (input.tenantId === null && settings.global !== 'shared') {
    return { index, code: 'FERRY_GLOBAL_SCOPE_REJECTED', reason: "global messages need global: 'shared'" };
  }
  let payloadJson: string;
  try {
    payloadJson = JSON.stringify(input.payload);
  } catch {
    return { index, code: 'FERRY_VALIDATION_FAILED', reason: 'payload is not serializable JSON' };
  }
  const payloadBytes = Buffer.byteLength(payloadJson, 'utf8');
  if (payloadBytes > settings.maxPayloadBytes) {
    return {
      index,
      code: 'FERRY_PAYLOAD_TOO_LARGE',
      reason: `payload is ${payloadBytes} bytes; the limit is ${settings.maxPayloadBytes}`,
    };
  }
  const identity = { scope: scopeOf(input.tenantId), consumer: input.consumer, messageId: input.messageId };
  const receipt: NewReceipt = {
    tenantId: input.tenantId,
    consumer: input.consumer,
    messageId: input.messageId,
    messageType: input.type ?? null,
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

async function admit(db: SqlExecutor, settings: AcceptSettings, fresh: readonly Prepared[]): Promise<void> {
  if (settings.maxPendingMessages === null || fresh.length === 0) return;
  const backlog = await countBacklog(db, settings.maxPendingMessages);
  if (backlog >= settings.maxPendingMessages) {
    throw new FerryError(
      'FERRY_ADMISSION_REJECTED',
      `inbox backlog reached maxPendingMessages (${settings.maxPendingMessages})`,
      {
        details: { maxPendingMessages: settings.maxPendingMessages },
      },
    );
  }
}

function databaseFailure(cause: unknown): FerryError {
  if (cause instanceof FerryError) return cause;
  return new FerryError(
    'FERRY_DATABASE_UNAVAILABLE',
    'inbox acceptance failed; nothing may be acknowledged',
    { cause },
  );
}

/**
 * Accepts a batch: invalid inputs are reported, valid ones are inserted in one statement
 * (identity conflicts skipped), existing receipts are read back and classified as duplicate
 * or fingerprint conflict. At the admission limit, a batch that would add new receipts is
 * refused as a whole (FERRY_ADMISSION_REJECTED); pure duplicates are still answered.
 */
export async function acceptBatch(
  db: SqlExecutor,
  inputs: readonly InboxAcceptInput[],
  settings: AcceptSettings,
): Promise<AcceptOutcome[]> {
  const outcomes: AcceptOutcome[] = new Array<AcceptOutcome>(inputs.length);
  const valid: Prepared[] = [];
  inputs.forEach((input, index) => {
    const prepared = prepareInput(input, index, settings);
    if ('identity' in prepared) valid.push(prepared);
    else outcomes[index] = { kind: 'invalid', code: prepared.code, reason: prepared.reason };
  });
  const first = new Map<string, Prepared>();
  for (const prepared of valid)
    if (!first.has(keyOf(prepared.identity))) first.set(keyOf(prepared.identity), prepared);
  try {
    const existingBefore =
      settings.maxPendingMessages === null
        ? []
        : await findByIdentity(
            db,
            [...first.values()].map((p) => p.identity),
          );
    const known = new Set(
      existingBefore.map((r) =>
        keyOf({ scope: scopeOf(r.tenantId), consumer: r.consumer, messageId: r.messageId }),
      ),
    );
    const fresh = [...first.values()].filter((p) => !known.has(keyOf(p.identity)));
    await admit(db, settings, fresh);
    const inserted = await insertReceipts(
      db,
      fresh.map((p) => p.receipt),
      settings.maxAttempts,
    );
    const insertedKeys = new Set(
      inserted.map((r) =>
        keyOf({ scope: scopeOf(r.tenantId), consumer: r.consumer, messageId: r.messageId }),
      ),
    );
    const missing = [...first.values()].filter((p) => !insertedKeys.has(keyOf(p.identity)));
    const existing = [
      ...existingBefore,
      ...(await findByIdentity(
        db,
        missing.map((p) => p.identity),
      )),
    ];
    const byKey = new Map<string, InboxRecord>();
    for (const record of [...existing, ...inserted]) {
      byKey.set(
        keyOf({ scope: scopeOf(record.tenantId), consumer: record.consumer, messageId: record.messageId }),
        record,
      );
    }
    for (const prepared of valid) {
      const key = keyOf(prepared.identity);
      const record = byKey.get(key);
      if (!record) throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'a receipt vanished during acceptance');
      const isFirstInsert = insertedKeys.has(key) && first.get(key) === prepared;
      outcomes[prepared.index] = classify(prepared, record, isFirstInsert);
    }
  } catch (cause) {
    throw databaseFailure(cause);
  }
  return outcomes;
}
