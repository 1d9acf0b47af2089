/**
 * W3C trace context (https://www.w3.org/TR/trace-context/) as ferry stores and forwards it:
 * the `traceparent` and `tracestate` columns of an outbox row and headers of a delivery.
 * Pure; no OpenTelemetry needed.
 */

/** The shape emit accepts for a traceparent (any version, lower-case hex). */
export const TRACEPARENT_PATTERN = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Characters of a version-00 traceparent: the fields every version starts with. */
const TRACEPARENT_LENGTH = 55;

/** The longest tracestate emit stores. */
export const MAX_TRACESTATE = 512;

export interface ParsedTraceparent {
  readonly traceId: string;
  readonly spanId: string;
  /** The trace flags (bit 0: sampled). */
  readonly traceFlags: number;
}

const ALL_ZERO = /^0+$/;

/**
 * The trace and parent span a traceparent names, or null when it is absent or unusable as a
 * parent: wrong shape, version `ff`, or an all-zero trace or span id. A version above 00 may
 * carry more fields (W3C Trace Context, "Versioning of traceparent"): its first four are read
 * when what follows them starts with '-'; version 00 has exactly four.
 */
export function parseTraceparent(value: string | null | undefined): ParsedTraceparent | null {
  if (typeof value !== 'string' || value.length < TRACEPARENT_LENGTH) return null;
  const head = value.slice(0, TRACEPARENT_LENGTH);
  if (!TRACEPARENT_PATTERN.test(head)) return null;
  const [version, traceId, spanId, flags] = head.split('-') as [string, string, string, string];
  if (value.length > TRACEPARENT_LENGTH && (version === '00' || value[TRACEPARENT_LENGTH] !== '-'))
    return null;
  if (version === 'ff' || ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** A version-00 traceparent. */
export function formatTraceparent(context: ParsedTraceparent): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/** The most list members a tracestate has (W3C Trace Context, "tracestate Limits"). */
const MAX_TRACESTATE_MEMBERS = 32;

/** A list member's key: simple, or multi-tenant `tenant@system` (W3C Trace Context, "key"). */
const MEMBER_KEY = /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;

/** A list member's value: printable ASCII but ',' and '=', not ending in a space, 1-256 chars. */
const MEMBER_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * `value` when it is a tracestate as W3C Trace Context defines it (at most 32 `key=value` list
 * members of printable ASCII, empty members and optional spaces around them allowed, at most
 * MAX_TRACESTATE characters), else null. A tracestate read from a delivery is forwarded on the
 * handler's events only when it is one: control characters, line breaks or other text in it made
 * the next broker refuse the event (SQS: permanent), or forged a header line (review 37).
 */
export function validTracestate(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TRACESTATE) return null;
  let members = 0;
  for (const raw of value.split(',')) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member.length === 0) continue;
    members += 1;
    const eq = member.indexOf('=');
    if (members > MAX_TRACESTATE_MEMBERS || eq <= 0) return null;
    if (!MEMBER_KEY.test(member.slice(0, eq)) || !MEMBER_VALUE.test(member.slice(eq + 1))) return null;
  }
  return members === 0 ? null : value;
}
