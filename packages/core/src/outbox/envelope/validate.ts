import { randomUUID } from 'node:crypto';
import { FerryValidationError } from '../../errors';
import { TRANSPORT_REJECT_REASONS } from '../../transport/errors';
import { copyHeaders, headersFault } from '../../validate/headers';
import { isPlainObject, jsonText, serializedTextFault, type JsonFault } from '../../validate/json';
import { IDENTIFIER_LIMITS } from '../../validate/identifierLimits';
import { tenantIdFault } from '../../validate/tenantId';
import { assertText } from '../../validate/text';
import { MAX_TRACESTATE, parseTraceparent, TRACEPARENT_PATTERN, validTracestate } from '../../tracing/w3c';
import { spellingHint, type OptionKeys } from '../../optionChecks';
import { OUTBOX_DEFAULTS } from '../options';
import type { EnvelopeLimits, OutboxEventInput, ValidEnvelope } from './types';

/** Every field of an event; any other key is refused (validateEnvelope). */
const EVENT_FIELDS = {
  type: true,
  payload: true,
  destination: true,
  orderingKey: true,
  tenantId: true,
  correlationId: true,
  causationId: true,
  headers: true,
  traceparent: true,
  tracestate: true,
  maxRetries: true,
} as const satisfies OptionKeys<OutboxEventInput>;
const EVENT_FIELD_NAMES = Object.keys(EVENT_FIELDS) as Array<keyof OutboxEventInput>;

/** A caller's event with every field read once: what is checked is what is stored. */
type EventFields = { -readonly [K in keyof OutboxEventInput]?: unknown };

/** How many prototypes of an event refuseUnknownKeys reads keys from (a Proxy can answer a new one each time). */
const MAX_PROTOTYPES = 16;

/**
 * The keys a read of `event` can see besides its fields' own: its own enumerable keys, and the
 * names its prototypes (below Object.prototype) hold but `constructor`; an inherited name is
 * kept only when it holds a value (a misspelt getter or default), not a method.
 */
function visibleKeys(event: object): Array<{ readonly key: string; readonly inherited: boolean }> {
  const keys = Object.keys(event).map((key) => ({ key, inherited: false }));
  const seen = new Set(keys.map((k) => k.key));
  let proto = Object.getPrototypeOf(event) as object | null;
  for (let depth = 0; proto !== null && proto !== Object.prototype && depth < MAX_PROTOTYPES; depth += 1) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === 'constructor' || seen.has(key)) continue;
      seen.add(key);
      keys.push({ key, inherited: true });
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return keys;
}

/**
 * A key of `event` that is not an event field (with a value: a key spread as undefined passes)
 * is refused, naming it: dropped, a misspelt `tenantID: 'acme'` made a global event. The keys
 * checked are the keys a field read sees: inherited ones too (a class's misspelt `get tenantID()`,
 * an `Object.create(defaults)`), but methods. An event whose keys cannot be listed (a Proxy whose
 * ownKeys or getPrototypeOf trap throws) is read field by field.
 */
function refuseUnknownKeys(event: object): void {
  let keys: ReturnType<typeof visibleKeys>;
  try {
    keys = visibleKeys(event);
  } catch {
    return;
  }
  for (const { key, inherited } of keys) {
    if (Object.hasOwn(EVENT_FIELDS, key)) continue;
    let value: unknown = null;
    try {
      value = (event as Record<string, unknown>)[key];
    } catch {
      // Unreadable is not undefined: the key is refused as any other.
    }
    if (value === undefined || (inherited && typeof value === 'function')) continue;
    const why = key === 'id' ? ': emit chooses the id and returns it' : spellingHint(key, EVENT_FIELD_NAMES);
    fail(key, `is not a field of an event (known: ${EVENT_FIELD_NAMES.join(', ')})${why}`);
  }
}

/** Reads each field of `event` once, after refusing keys that are not fields. */
function eventFields(event: unknown): EventFields {
  if (event === null || typeof event !== 'object') fail('event', 'must be an object');
  refuseUnknownKeys(event);
  const fields: EventFields = {};
  for (const name of EVENT_FIELD_NAMES) fields[name] = reading(name, () => (event as EventFields)[name]);
  return fields;
}

function fail(field: string, reason: string, rule?: string): never {
  const code =
    rule === TRANSPORT_REJECT_REASONS.payloadTooLarge ? 'FERRY_PAYLOAD_TOO_LARGE' : 'FERRY_VALIDATION_FAILED';
  throw new FerryValidationError(field, reason, code, rule);
}

/** Refuses `field` whose value threw `error` as it was read (a getter, a Proxy trap). */
function unreadable(field: string, error: unknown): never {
  if (error instanceof FerryValidationError) throw error;
  const detail = error instanceof Error ? error.message : typeof error;
  return fail(field, `could not be read: ${detail}`.slice(0, 300));
}

/** `read()`, or `field` refused as unreadable when it throws. */
function reading<T>(field: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    return unreadable(field, error);
  }
}

function failOn(fault: JsonFault | null): void {
  if (fault !== null) fail(fault.path, fault.reason, fault.rule === 'inbox_invalid' ? undefined : fault.rule);
}

function optionalText(field: string, value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(field, 'must be a string or null');
  if (value.length === 0) fail(field, 'must not be empty (use null)');
  if (value.length > max) fail(field, `longer than ${max} characters`);
  assertText(field, value);
  return value;
}

/**
 * The tenant as every ferry consumer will read it (tenantIdFault, the rule acceptance applies; at
 * most IDENTIFIER_LIMITS.tenantId characters whatever `max`): one that shows nothing, holds a
 * control character or line break, or is longer than acceptance takes would be committed here and
 * dead-lettered by every consumer.
 */
function tenantText(value: unknown, max: number): string | null {
  const tenant = optionalText('tenantId', value, Math.min(max, IDENTIFIER_LIMITS.tenantId));
  const fault = tenant === null ? null : tenantIdFault(tenant);
  if (fault !== null) fail('tenantId', fault.reason, fault.rule);
  return tenant;
}

/**
 * The headers as stored: each value read once into a copy, which is checked and serialized (the
 * application's object is not read again: a getter answering otherwise would store another text).
 */
function validateHeaders(input: unknown, limits: EnvelopeLimits): string {
  if (input === undefined) return '{}';
  const headers = reading('headers', () => copyHeaders(input));
  failOn(reading('headers', () => headersFault(headers, limits, true)));
  return JSON.stringify(headers);
}

/**
 * The payload's JSON text, written by the walk that checks it (jsonText): what is stored is what
 * was checked, each value read once, and a payload over maxPayloadBytes is refused as soon as
 * the text passes it (FERRY_PAYLOAD_TOO_LARGE), however large the whole would be. `bytes`: its
 * UTF-8 bytes as PostgreSQL's jsonb text writes it, which the relay's claim returns (payload_bytes,
 * counted against maxBatchBytes): the text's, a space after each `:` and `,`, and every number in
 * plain digits (`1e+308` is 309 of them; review 144), capped at an integer column's largest value.
 */
function validatePayload(payload: unknown, limits: EnvelopeLimits): { json: string; bytes: number } {
  if (!reading('payload', () => isPlainObject(payload))) fail('payload', 'must be a JSON object');
  const written = jsonText(payload, { maxDepth: limits.maxPayloadDepth, maxChars: limits.maxPayloadBytes });
  failOn(written.fault);
  const json = written.text as string;
  const serialized = serializedTextFault(json);
  if (serialized !== null) fail('payload', serialized, TRANSPORT_REJECT_REASONS.invalidText);
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.maxPayloadBytes) {
    fail('payload', `larger than ${limits.maxPayloadBytes} bytes`, TRANSPORT_REJECT_REASONS.payloadTooLarge);
  }
  const growth = written.fault === null ? written.jsonbGrowth : 0;
  return { json, bytes: Math.min(bytes + growth, MAX_PAYLOAD_BYTES_COLUMN) };
}

/** payload_bytes' largest value (an integer column). */
const MAX_PAYLOAD_BYTES_COLUMN = 2_147_483_647;

function validateMaxRetries(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const rule = OUTBOX_DEFAULTS['retry.maxRetries'];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || value > rule.max) {
    fail('maxRetries', `must be an integer between ${rule.min} and ${rule.max}`);
  }
  return value;
}

/**
 * Validates a whole envelope before any SQL runs. Throws FerryValidationError naming the
 * field and the reason (code FERRY_PAYLOAD_TOO_LARGE for an oversized payload), also when the
 * application's value throws as it is read (a getter, a Proxy trap): never that raw error. Each
 * field is read once; `inherit` (an inbox handler's correlation and trace context) completes the
 * fields read, never the caller's object, inside the same guard.
 */
export function validateEnvelope(
  event: OutboxEventInput,
  limits: EnvelopeLimits,
  defaultMaxRetries: number,
  inherit: (fields: OutboxEventInput) => OutboxEventInput = (fields) => fields,
): ValidEnvelope {
  try {
    const fields = inherit(eventFields(event) as OutboxEventInput);
    return { id: randomUUID(), ...readEnvelope(fields, limits, defaultMaxRetries) };
  } catch (error) {
    return unreadable('event', error);
  }
}

/**
 * The field of `event` emit would refuse and why (validateEnvelope's checks), or null: for an
 * event read back from the table, which SQL may have written without emit. `checkPayload` false
 * leaves the payload's own checks out, for a caller that knows from its text that none can fail.
 */
export function envelopeFault(
  event: OutboxEventInput,
  limits: EnvelopeLimits,
  checkPayload = true,
): { readonly field: string; readonly reason: string } | null {
  try {
    readEnvelope(event, limits, OUTBOX_DEFAULTS['retry.maxRetries'].default, checkPayload);
    return null;
  } catch (error) {
    if (error instanceof FerryValidationError) return { field: error.field, reason: error.reason };
    const detail = error instanceof Error ? error.message : typeof error;
    return { field: 'event', reason: `could not be read: ${detail}`.slice(0, 300) };
  }
}

/**
 * An explicit tracestate as W3C Trace Context defines it (validTracestate: `key=value` members of
 * printable ASCII, at most 32 of them), stored as given; else refused as the traceparent is.
 * Any text of up to 512 characters was stored and relayed, where every W3C reader drops it (review 106).
 */
function w3cTracestate(value: unknown): string | null {
  const tracestate = optionalText('tracestate', value, MAX_TRACESTATE);
  if (tracestate !== null && !usableTracestate(tracestate)) fail('tracestate', 'not W3C trace context');
  return tracestate;
}

/** Whether emit stores `tracestate` as given (w3cTracestate), the relay publishes it (foreignRows). */
export function usableTracestate(tracestate: string): boolean {
  return validTracestate(tracestate) === tracestate;
}

/** Whether emit stores `traceparent` as given (w3cTraceparent), the relay publishes it (foreignRows). */
export function usableTraceparent(traceparent: string): boolean {
  return TRACEPARENT_PATTERN.test(traceparent) && parseTraceparent(traceparent) !== null;
}

/**
 * An explicit traceparent as W3C Trace Context defines it and every W3C reader takes it
 * (parseTraceparent: version-00 shape, not version `ff`, neither id all zeros), stored as given;
 * else refused. The shape alone let version `ff` and all-zero ids through, stored and relayed
 * where every reader (ferry's consumers, its publish span, OpenTelemetry) drops them (review 135).
 */
function w3cTraceparent(value: unknown): string | null {
  const traceparent = optionalText('traceparent', value, 55);
  if (traceparent !== null && !usableTraceparent(traceparent)) fail('traceparent', 'not W3C trace context');
  return traceparent;
}

function readEnvelope(
  event: OutboxEventInput,
  limits: EnvelopeLimits,
  defaultMaxRetries: number,
  checkPayload = true,
): Omit<ValidEnvelope, 'id'> {
  if (event === null || typeof event !== 'object') fail('event', 'must be an object');
  const { type } = event as { type: unknown };
  if (typeof type !== 'string' || type.trim().length === 0) fail('type', 'must be a non-empty string');
  if (type.length > limits.maxTypeLength) fail('type', `longer than ${limits.maxTypeLength} characters`);
  assertText('type', type);
  const traceparent = w3cTraceparent(event.traceparent);
  const payload = checkPayload ? validatePayload(event.payload, limits) : { json: '', bytes: 0 };
  return {
    type,
    payloadJson: payload.json,
    payloadBytes: payload.bytes,
    destination: optionalText('destination', event.destination, limits.maxIdLength),
    orderingKey: optionalText('orderingKey', event.orderingKey, limits.maxIdLength),
    tenantId: tenantText(event.tenantId, limits.maxIdLength),
    correlationId: optionalText('correlationId', event.correlationId, limits.maxIdLength),
    causationId: optionalText('causationId', event.causationId, limits.maxIdLength),
    headersJson: validateHeaders(event.headers, limits),
    traceparent,
    tracestate: w3cTracestate(event.tracestate),
    maxRetries: validateMaxRetries(event.maxRetries, defaultMaxRetries),
  };
}
