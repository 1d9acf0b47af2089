import type { InboxAcceptInput } from '../contracts';
import { FerryValidationError, type FerryErrorCode } from '../errors';
import { arrayLengthArgument } from '../optionChecks';
import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from '../transport/errors';
import { copyHeaders, headersFault } from '../validate/headers';
import { isPlainObject, jsonText, kindOf, serializedTextFault } from '../validate/json';
import { IDENTIFIER_LIMITS } from '../validate/identifierLimits';
import { MAX_BATCH_ITEMS } from '../validate/batchLimit';
import { payloadNumberRule } from '../validate/parsedBodies';
import { tenantIdFault } from '../validate/tenantId';
import { identifierFault, textFault } from '../validate/text';
import { reservedIdFault } from './messageIds';

/**
 * Fixed limits of what acceptance stores besides the payload's byte limit (maxPayloadBytes).
 * Headers: 64 names besides ferry's own (FERRY_HEADERS), 16 KiB of names and values together (reason `headers_too_large`);
 * payload nesting: 64 levels, the payload object being level 1 (reason `payload_too_deep`).
 */
export const INBOX_INPUT_LIMITS = {
  /**
   * Inputs of one acceptMany / acceptDetailed call: a longer array (a sparse one, a Proxy
   * claiming a length in the billions) is refused before any input is read (readInputs); the
   * transports' acceptIsolated splits a longer batch of theirs in halves. The same bound as
   * emitMany's events (MAX_BATCH_ITEMS).
   */
  maxBatchInputs: MAX_BATCH_ITEMS,
  maxHeaders: 64,
  maxHeaderBytes: 16_384,
  maxPayloadDepth: 64,
} as const;

/** Why an input is refused before any SQL: its code, a readable reason, and a stable one. */
export interface InputFault {
  readonly code: FerryErrorCode;
  readonly reason: string;
  readonly rejectReason: TransportRejectReason;
}

export const invalidInput = (
  reason: string,
  rejectReason: TransportRejectReason = 'inbox_invalid',
): InputFault => ({
  code: 'FERRY_VALIDATION_FAILED',
  reason,
  rejectReason,
});
const invalid = invalidInput;

/**
 * Why a string field is not 1..max characters, or null. `nullable`: null may stand for it
 * ('null'), or null and undefined ('nullish').
 */
function lengthFault(
  field: string,
  value: unknown,
  max: number,
  nullable: 'null' | 'nullish' | false,
): string | null {
  if (nullable !== false && (value === null || (nullable === 'nullish' && value === undefined))) return null;
  if (typeof value !== 'string') {
    return `${field} must be ${nullable ? 'null or ' : ''}a string, got ${kindOf(value)}`;
  }
  if (value.length === 0) return `${field} must not be empty`;
  if (value.length > max) return `${field} is ${value.length} characters; the limit is ${max}`;
  return null;
}

const consumerLengthFault = (consumer: unknown): string | null =>
  lengthFault('consumer', consumer, IDENTIFIER_LIMITS.consumer, false);

/**
 * Why acceptance refuses `consumer` as a consumer name, or null: its length (shapeFault) and
 * its text (identityTextFault), the same checks. resolveInboxOptions applies it to the handlers'
 * names: a handler acceptance can never take a message for is a configuration error.
 */
export function consumerNameFault(consumer: unknown): string | null {
  const length = consumerLengthFault(consumer);
  if (length !== null) return length;
  const text = textFault(consumer as string);
  return text === null ? null : `consumer ${text}`;
}

function shapeFault(input: InboxAcceptInput): InputFault | null {
  if (!isPlainObject(input)) return invalid('input must be an object');
  const fault =
    consumerLengthFault(input.consumer) ??
    lengthFault('messageId', input.messageId, IDENTIFIER_LIMITS.messageId, false) ??
    (input.tenantId === null || typeof input.tenantId === 'string'
      ? null
      : `tenantId must be null or a string, got ${kindOf(input.tenantId)}`) ??
    (isPlainObject(input.payload) ? null : 'payload must be a JSON object') ??
    lengthFault('type', input.type, IDENTIFIER_LIMITS.eventType, 'nullish') ??
    lengthFault('system', input.system, IDENTIFIER_LIMITS.system, 'nullish');
  if (fault !== null) return invalid(fault);
  const id = identifierFault(input.messageId) ?? reservedIdFault(input.messageId);
  if (id !== null) return invalid(`messageId ${id}`);
  const tenant = input.tenantId === null ? null : tenantIdFault(input.tenantId);
  if (tenant === null) return null;
  return invalid(`tenantId ${tenant.reason}`, tenant.rule);
}

/** The input's text fields identityTextFault checks, in the order it names the first fault. */
const IDENTITY_FIELDS = ['consumer', 'messageId', 'type', 'system'] as const;

function identityTextFault(input: InboxAcceptInput): InputFault | null {
  for (const field of IDENTITY_FIELDS) {
    const value: unknown = input[field];
    const fault = typeof value === 'string' ? textFault(value) : null;
    if (fault !== null) return invalid(`${field} ${fault}`, TRANSPORT_REJECT_REASONS.invalidText);
  }
  return null;
}

/** An input whose fields threw as they were read (readInputs): invalid alone (prepareInput). */
export class UnreadableInput {
  constructor(readonly detail: string) {}
}

/** What a thrown value says, never throwing itself (a Proxy, a throwing getter). */
export function thrownDetail(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : typeof error;
  } catch {
    return 'a thrown value that could not be read';
  }
}

/**
 * Every index of `inputs` (a hole as undefined, refused as any input that is not an object), each
 * input's fields read once (acceptFields): the handler check, the checks and the stored row all
 * read the copy, so a getter answering otherwise on a later read can neither store another value
 * nor shift the results. An input whose reading throws is an UnreadableInput; an array whose
 * elements cannot be read (a Proxy) is refused (FerryValidationError on `inputs`), and so, before
 * any element is read, is one longer than INBOX_INPUT_LIMITS.maxBatchInputs or whose length is
 * no array length (arrayLengthArgument: its length read once).
 */
export function readInputs(inputs: readonly unknown[]): unknown[] {
  const length = arrayLengthArgument('inputs', inputs, INBOX_INPUT_LIMITS.maxBatchInputs, 'inputs');
  let list: unknown[];
  try {
    list = Array.from({ length }, (_, i) => inputs[i]);
  } catch (error) {
    throw new FerryValidationError('inputs', `could not be read: ${thrownDetail(error)}`.slice(0, 300));
  }
  return list.map((input) => {
    try {
      return acceptFields(input) ?? input;
    } catch (error) {
      return new UnreadableInput(thrownDetail(error));
    }
  });
}

/**
 * The fields of an input, each read once (a getter or a Proxy answers each check and the stored
 * value alike from this copy); the headers copied into a plain object of their own entries, read
 * once. Throws what the application's value throws as it is read (prepareInput reports it).
 */
export function acceptFields(input: unknown): InboxAcceptInput | null {
  if (!isPlainObject(input)) return null;
  const { consumer, messageId, tenantId, payload, headers, type, system } =
    input as unknown as InboxAcceptInput;
  return {
    consumer,
    messageId,
    tenantId,
    payload,
    headers: copyHeaders(headers) as InboxAcceptInput['headers'],
    type,
    system,
  };
}

const tooLarge = (reason: string): InputFault => ({
  code: 'FERRY_PAYLOAD_TOO_LARGE',
  reason,
  rejectReason: TRANSPORT_REJECT_REASONS.payloadTooLarge,
});

/** The payload's JSON text as acceptance stores it, or why it cannot be stored. */
export type CheckedPayload = { readonly json: string; readonly bytes: number } | InputFault;

/**
 * The first reason `input` (acceptFields' copy) cannot be stored unchanged, or null: its shape,
 * NUL or unpaired surrogates in any string (identity, type, header names and values), header
 * count and bytes. The payload is payloadText's.
 */
export function inputFault(input: InboxAcceptInput): InputFault | null {
  const fault = shapeFault(input) ?? identityTextFault(input);
  if (fault !== null) return fault;
  const headers = input.headers === undefined ? null : headersFault(input.headers, INBOX_INPUT_LIMITS, false);
  return headers === null ? null : invalid(`${headers.path} ${headers.reason}`, headers.rule);
}

/**
 * The payload's JSON text, written by the walk that checks it (jsonText, as emit's): every value
 * read once, so what is stored and fingerprinted is what was checked. Refused: NUL or unpaired
 * surrogates in a key or string, nesting past maxPayloadDepth, numbers JSON would change
 * (payloadNumberRule: the floats beyond 2^53-1 a parsed body held are kept where it held them,
 * any other integer beyond it is refused), more than `maxPayloadBytes` UTF-8 bytes (the walk stops
 * as soon as its text passes them). The text is canonical (canonicalJson's: keys in code-unit
 * order), so it is also what the payload's fingerprint hashes (canonicalTextFingerprint); the
 * column is jsonb, which keeps no key order of its own text.
 */
export function payloadText(payload: unknown, maxPayloadBytes: number): CheckedPayload {
  const written = jsonText(
    payload,
    { maxDepth: INBOX_INPUT_LIMITS.maxPayloadDepth, maxChars: maxPayloadBytes, canonical: true },
    'payload',
    payloadNumberRule(payload),
  );
  if (written.fault !== null) {
    const { path, reason, rule } = written.fault;
    return rule === TRANSPORT_REJECT_REASONS.payloadTooLarge
      ? tooLarge(`payload is more than ${maxPayloadBytes} bytes; the limit is ${maxPayloadBytes}`)
      : invalid(`${path} ${reason}`, rule);
  }
  const json = written.text as string;
  const serialized = serializedTextFault(json);
  if (serialized !== null) return invalid(`payload ${serialized}`, TRANSPORT_REJECT_REASONS.invalidText);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxPayloadBytes) return tooLarge(`payload is ${bytes} bytes; the limit is ${maxPayloadBytes}`);
  return { json, bytes };
}
