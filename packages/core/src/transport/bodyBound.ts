import { INBOX_INPUT_LIMITS } from '../inbox/validateInput';
import { jsonText } from '../validate/json';
import { payloadNumberRule } from '../validate/parsedBodies';
import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from './errors';

/**
 * The most UTF-8 bytes a JSON text spends on one byte of its value's compact text
 * (JSON.stringify, what an acceptor's `maxPayloadBytes` measures): an ASCII character written as
 * a `\u0041` escape, as a JSON writer may write any character of a string (`é`: 2 bytes, 6 as
 * `\u00e9`; an astral character: 4, 12 as two escapes; `\"`: 2, 6 as `\u0022`).
 */
export const MAX_BYTES_PER_PAYLOAD_BYTE = 6;

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** A leading byte order mark: 3 bytes in UTF-8, one code unit in a string. */
const BOM = 0xfeff;

/**
 * Why a message body is too large to be worth parsing for a payload limit of `maxPayloadBytes`,
 * or null. It is never stricter than the limit itself, which is the acceptor's, on the parsed
 * payload (UTF-8 bytes of JSON.stringify): it only spares parsing a body no payload within the
 * limit can be written as. That is a body whose JSON text, without the whitespace between tokens
 * and a leading byte order mark, is over MAX_BYTES_PER_PAYLOAD_BYTE × `maxPayloadBytes`: every
 * string of it written with escapes stays within that, and whitespace (pretty printing, any
 * indentation) is not counted. Only repeated keys (JSON.parse keeps the last) or padded numbers
 * (`1.000…0`) could make a payload within the limit longer; those are refused unparsed.
 * `body`: the text (SQS) or its bytes (RabbitMQ, Kafka): the characters counted are ASCII, which
 * UTF-8 never uses inside a multi-byte character.
 */
export function oversizeBodyFault(body: string | Uint8Array, maxPayloadBytes: number): string | null {
  const bound = MAX_BYTES_PER_PAYLOAD_BYTE * maxPayloadBytes;
  const bytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  if (bytes <= bound) return null;
  const significant = bytes - insignificantBytes(body);
  if (significant <= bound) return null;
  return `body is ${bytes} bytes, ${significant} without whitespace between tokens: over ${MAX_BYTES_PER_PAYLOAD_BYTE} × the limit ${maxPayloadBytes}, longer than any payload within it written with escapes`;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Why a message body is refused unparsed for its nesting, or null: its objects and arrays nest
 * deeper than the inbox's INBOX_INPUT_LIMITS.maxPayloadDepth (64, the payload object being level
 * 1), which acceptance refuses (`payload_too_deep`) whatever the rest. V8's JSON.parse of nested
 * arrays costs about ten times a flat body of the same size (1.5 s for the 1.5 MB within 6 × the
 * inbox's default limit): a batch of them, decoded in one turn of the event loop, kept a consumer
 * from its heartbeat, its connection was closed and the batch came back to be parsed again (review
 * 87). One pass over the body, brackets inside strings not counted; as oversizeBodyFault, `body`
 * is the text (SQS) or its bytes (RabbitMQ, Kafka).
 */
export function nestedBodyFault(body: string | Uint8Array): string | null {
  const maxDepth = INBOX_INPUT_LIMITS.maxPayloadDepth;
  if (body.length <= maxDepth || openingsAtMost(body, maxDepth)) return null;
  const text = typeof body === 'string';
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < body.length; i += 1) {
    const c = text ? body.charCodeAt(i) : body[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) {
        return `body nests deeper than ${maxDepth} levels, more than any payload acceptance takes`;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return null;
}

/**
 * Whether `body` holds at most `limit` `{` and `[` in all, strings included: then it cannot nest
 * deeper than `limit`. Found by the runtime's own search (indexOf), not a loop over every byte:
 * most bodies hold a few brackets, and nestedBodyFault's scan runs for every message.
 */
function openingsAtMost(body: string | Uint8Array, limit: number): boolean {
  const next: (opening: number, from: number) => number =
    typeof body === 'string'
      ? (opening, from) => body.indexOf(String.fromCharCode(opening), from)
      : (opening, from) => body.indexOf(opening, from);
  let count = 0;
  for (const opening of [OPEN_BRACE, OPEN_BRACKET]) {
    for (let at = next(opening, 0); at !== -1; at = next(opening, at + 1)) {
      count += 1;
      if (count > limit) return false;
    }
  }
  return true;
}

/** Bytes of `body` that are no part of its value: whitespace outside strings and a leading byte order mark. */
function insignificantBytes(body: string | Uint8Array): number {
  const text = typeof body === 'string';
  let count = 0;
  let start = 0;
  if (text ? body.charCodeAt(0) === BOM : body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
    count = 3;
    start = text ? 1 : 3;
  }
  let inString = false;
  let escaped = false;
  for (let i = start; i < body.length; i += 1) {
    const c = text ? body.charCodeAt(i) : body[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === SPACE || c === TAB || c === LF || c === CR) {
      count += 1;
    }
  }
  return count;
}

/** Why a parsed payload is refused, as a transport dead-letters it. */
export interface PayloadFault {
  readonly reason: TransportRejectReason;
  readonly detail: string;
}

/**
 * Why a parsed body's payload is over `maxPayloadBytes` as the inbox measures it (UTF-8 bytes of
 * JSON.stringify), or null; never a throw. JSON.parse is iterative but JSON.stringify recurses: a
 * payload nested past what it can write (`[[[…]]]`, 2 bytes a level) overflowed the stack, and
 * the whole batch threw (review 87). Such a payload is written by the inbox's own walk (jsonText,
 * no recursion) with its rules instead, and answered with the inbox's reason and detail
 * (`payload_too_deep`). Consumers refuse such bodies before parsing them (nestedBodyFault).
 */
export function payloadSizeFault(
  payload: Record<string, unknown>,
  maxPayloadBytes: number,
): PayloadFault | null {
  // JSON.stringify first: the walk costs about 300 times as much (2 s for a flat array of 786,000
  // numbers within 6 × the inbox's default limit: a batch of them kept a consumer from its
  // heartbeat). A body nested past the inbox's depth is refused before it is parsed
  // (nestedBodyFault), so only a payload handed here otherwise can overflow the stack.
  let compact: string | undefined;
  try {
    compact = JSON.stringify(payload);
  } catch {
    compact = undefined;
  }
  if (compact !== undefined) return sizeFault(Buffer.byteLength(compact, 'utf8'), maxPayloadBytes);
  const written = jsonText(
    payload,
    { maxDepth: INBOX_INPUT_LIMITS.maxPayloadDepth, maxChars: Infinity },
    'payload',
    payloadNumberRule(payload),
  );
  if (written.fault !== null) {
    return { reason: written.fault.rule, detail: `${written.fault.path} ${written.fault.reason}` };
  }
  return sizeFault(Buffer.byteLength(written.text ?? '', 'utf8'), maxPayloadBytes);
}

function sizeFault(bytes: number, maxPayloadBytes: number): PayloadFault | null {
  if (bytes <= maxPayloadBytes) return null;
  return {
    reason: TRANSPORT_REJECT_REASONS.payloadTooLarge,
    detail: `payload is ${bytes} bytes; the limit is ${maxPayloadBytes}`,
  };
}
