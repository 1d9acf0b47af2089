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

/** A list member longer than this is the first to go when a tracestate is truncated (W3C). */
const LONG_MEMBER = 128;

/** `value`'s list members, trimmed, empty ones left out; null when one is not W3C's `key=value`. */
function tracestateMembers(value: string): string[] | null {
  const members: string[] = [];
  for (const raw of value.split(',')) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member.length === 0) continue;
    const eq = member.indexOf('=');
    if (eq <= 0 || !MEMBER_KEY.test(member.slice(0, eq)) || !MEMBER_VALUE.test(member.slice(eq + 1)))
      return null;
    members.push(member);
  }
  return members;
}

/** Length of `members` joined by ','. */
const joinedLength = (members: readonly string[]): number =>
  members.reduce((n, m) => n + m.length, 0) + Math.max(members.length - 1, 0);

/**
 * `members` cut to at most 32 members of MAX_TRACESTATE characters in all, as W3C Trace Context,
 * "tracestate Limits", says: members longer than 128 characters are removed first (from the end),
 * then members from the end.
 */
function truncatedMembers(members: readonly string[]): string[] {
  const kept = [...members];
  const fits = () => kept.length <= MAX_TRACESTATE_MEMBERS && joinedLength(kept) <= MAX_TRACESTATE;
  for (let i = kept.length - 1; i >= 0 && !fits(); i -= 1) {
    if (kept[i]!.length > LONG_MEMBER) kept.splice(i, 1);
  }
  while (!fits()) kept.pop();
  return kept;
}

/** Longest tracestate read: a header ferry stores is at most 16 KiB anyway (INBOX_INPUT_LIMITS). */
const MAX_READ_TRACESTATE = 16_384;

/**
 * `value` when it is a tracestate as W3C Trace Context defines it (`key=value` list members of
 * printable ASCII, empty members and optional spaces around them allowed), else null; one of more
 * than 32 members or MAX_TRACESTATE characters is truncated as W3C says (truncatedMembers), not
 * dropped. A tracestate read from a delivery is forwarded on the handler's events only when it is
 * one: control characters, line breaks or other text in it made the next broker refuse the event
 * (SQS: permanent), or forged a header line (review 37).
 */
export function validTracestate(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_READ_TRACESTATE) return null;
  const members = tracestateMembers(value);
  if (members === null || members.length === 0) return null;
  if (members.length <= MAX_TRACESTATE_MEMBERS && value.length <= MAX_TRACESTATE) return value;
  const kept = truncatedMembers(members);
  return kept.length === 0 ? null : kept.join(',');
}

/** The names of the W3C trace headers, as ferry writes and stores them. */
const TRACE_HEADER_NAMES = ['traceparent', 'tracestate'] as const;

/**
 * `name` as ferry stores a trace header (`traceparent`, `tracestate`) when it is one in another
 * case (`Traceparent`: Go's http.Header writes it so, and RabbitMQ, Kafka and SQS keep names as
 * written), else undefined. Header names are case-insensitive to W3C Trace Context.
 */
export function traceHeaderName(name: string): (typeof TRACE_HEADER_NAMES)[number] | undefined {
  const lower = name.length === 11 || name.length === 10 ? name.toLowerCase() : '';
  return TRACE_HEADER_NAMES.find((known) => known === lower);
}

/**
 * Whether `value` of a trace header (`canonical`: `traceparent` or `tracestate`, read under
 * `exact`ly that name or another case of it) replaces `current`, read before it under another
 * name. One rule, deterministic whatever the order: a valid value (parseTraceparent,
 * validTracestate) wins over an invalid one, then the exact lower-case name, then the first read
 * (review 95: an empty or malformed exact `traceparent` won over a valid `Traceparent`, and the
 * trace was lost).
 */
export function replacesTraceValue(
  canonical: (typeof TRACE_HEADER_NAMES)[number],
  value: string,
  exact: boolean,
  current: string,
): boolean {
  const valid = (text: string): boolean =>
    canonical === 'traceparent' ? parseTraceparent(text) !== null : validTracestate(text) !== null;
  const [given, held] = [valid(value), valid(current)];
  return given === held ? exact : given;
}

/**
 * The trace headers of `headers` (a delivery's or a receipt's), by any case of their names, chosen
 * by replacesTraceValue; null for one absent or not text. The one reader of incoming trace
 * context: the accept and process spans and the handler's message scope. Never throws (a hostile
 * object's getters or proxy traps read as absent).
 */
export function incomingTrace(headers: unknown): {
  readonly traceparent: string | null;
  readonly tracestate: string | null;
} {
  const found: Record<string, string | null> = { traceparent: null, tracestate: null };
  try {
    if (headers === null || typeof headers !== 'object') return { traceparent: null, tracestate: null };
    const record = headers as Record<string, unknown>;
    for (const name of Object.keys(record)) {
      const canonical = traceHeaderName(name);
      if (canonical === undefined) continue;
      const value = record[name];
      if (typeof value !== 'string') continue;
      const current = found[canonical] ?? null;
      if (current === null || replacesTraceValue(canonical, value, name === canonical, current)) {
        found[canonical] = value;
      }
    }
  } catch {
    // A proxy or getter that throws: what was read so far.
  }
  return { traceparent: found.traceparent ?? null, tracestate: found.tracestate ?? null };
}
