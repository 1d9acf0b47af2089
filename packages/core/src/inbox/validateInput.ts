import type { InboxAcceptInput } from '../contracts';
import type { FerryErrorCode } from '../errors';
import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from '../transport/errors';
import { headersFault } from '../validate/headers';
import { isPlainObject, jsonFault } from '../validate/json';
import { textFault } from '../validate/text';

/**
 * Fixed limits of what acceptance stores besides the payload's byte limit (maxPayloadBytes).
 * Headers: 64 names besides ferry's own (FERRY_HEADERS), 16 KiB of names and values together (reason `headers_too_large`);
 * payload nesting: 64 levels, the payload object being level 1 (reason `payload_too_deep`).
 */
export const INBOX_INPUT_LIMITS = {
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

const MAX_NAME = 200;
const MAX_MESSAGE_ID = 255;

const invalid = (reason: string, rejectReason: TransportRejectReason = 'inbox_invalid'): InputFault => ({
  code: 'FERRY_VALIDATION_FAILED',
  reason,
  rejectReason,
});

function text(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

function shapeFault(input: InboxAcceptInput): InputFault | null {
  if (!isPlainObject(input)) return invalid('input must be an object');
  if (!text(input.consumer, MAX_NAME))
    return invalid(`consumer must be a string of 1..${MAX_NAME} characters`);
  if (!text(input.messageId, MAX_MESSAGE_ID))
    return invalid(`messageId must be a string of 1..${MAX_MESSAGE_ID} characters`);
  if (input.tenantId !== null && !text(input.tenantId, MAX_NAME)) {
    return invalid(`tenantId must be null or a string of 1..${MAX_NAME} characters`);
  }
  if (!isPlainObject(input.payload)) return invalid('payload must be a JSON object');
  if (input.type !== undefined && input.type !== null && !text(input.type, MAX_NAME))
    return invalid('type must be a string');
  if (input.system !== undefined && input.system !== null && !text(input.system, MAX_NAME))
    return invalid(`system must be null or a string of 1..${MAX_NAME} characters`);
  return null;
}

function identityTextFault(input: InboxAcceptInput): InputFault | null {
  const fields = {
    consumer: input.consumer,
    messageId: input.messageId,
    tenantId: input.tenantId,
    type: input.type,
    system: input.system,
  };
  for (const [field, value] of Object.entries(fields)) {
    const fault = typeof value === 'string' ? textFault(value) : null;
    if (fault !== null) return invalid(`${field} ${fault}`, TRANSPORT_REJECT_REASONS.invalidText);
  }
  return null;
}

/**
 * The first reason `input` cannot be stored unchanged, or null: its shape, NUL or unpaired
 * surrogates in any string (identity, type, header names and values, payload keys and values),
 * header count and bytes, payload depth. Pure; the payload's byte limit is checked by the
 * caller once it has serialized the payload.
 */
export function inputFault(input: InboxAcceptInput): InputFault | null {
  const fault = shapeFault(input) ?? identityTextFault(input);
  if (fault !== null) return fault;
  const other =
    (input.headers === undefined ? null : headersFault(input.headers, INBOX_INPUT_LIMITS, false)) ??
    jsonFault(input.payload, INBOX_INPUT_LIMITS.maxPayloadDepth);
  return other === null ? null : invalid(`${other.path} ${other.reason}`, other.rule);
}
