import { randomUUID } from 'node:crypto';
import { FerryValidationError } from '../../errors';
import { OUTBOX_DEFAULTS } from '../options';
import type { EnvelopeLimits, OutboxEventInput, ValidEnvelope } from './types';

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const MAX_TRACESTATE = 512;

function fail(field: string, reason: string, payloadTooLarge = false): never {
  throw new FerryValidationError(
    field,
    reason,
    payloadTooLarge ? 'FERRY_PAYLOAD_TOO_LARGE' : 'FERRY_VALIDATION_FAILED',
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Walks a JSON value, rejecting what JSON cannot carry faithfully and bounding depth. */
function checkJson(value: unknown, path: string, depth: number, maxDepth: number): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(path, 'numbers must be finite');
    return;
  }
  if (value instanceof Date) return;
  if (typeof value !== 'object') fail(path, `${typeof value} is not JSON`);
  if (depth > maxDepth) fail(path, `nesting deeper than ${maxDepth}`);
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkJson(item, `${path}[${i}]`, depth + 1, maxDepth));
    return;
  }
  if (!isPlainObject(value)) fail(path, 'only plain objects, arrays and Dates are allowed');
  for (const [key, item] of Object.entries(value)) checkJson(item, `${path}.${key}`, depth + 1, maxDepth);
}

function optionalText(field: string, value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(field, 'must be a string or null');
  if (value.length === 0) fail(field, 'must not be empty (use null)');
  if (value.length > max) fail(field, `longer than ${max} characters`);
  return value;
}

function validateHeaders(input: unknown, limits: EnvelopeLimits): string {
  if (input === undefined) return '{}';
  if (!isPlainObject(input)) fail('headers', 'must be an object of string values');
  const entries = Object.entries(input);
  if (entries.length > limits.maxHeaders) fail('headers', `more than ${limits.maxHeaders} headers`);
  let bytes = 0;
  for (const [name, value] of entries) {
    if (name.length === 0) fail('headers', 'header names must not be empty');
    if (typeof value !== 'string') fail(`headers.${name}`, 'must be a string');
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  if (bytes > limits.maxHeaderBytes) fail('headers', `larger than ${limits.maxHeaderBytes} bytes`);
  return JSON.stringify(input);
}

function validatePayload(payload: unknown, limits: EnvelopeLimits): string {
  if (!isPlainObject(payload)) fail('payload', 'must be a JSON object');
  checkJson(payload, 'payload', 1, limits.maxPayloadDepth);
  const json = JSON.stringify(payload);
  if (Buffer.byteLength(json) > limits.maxPayloadBytes) {
    fail('payload', `larger than ${limits.maxPayloadBytes} bytes`, true);
  }
  return json;
}

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
 * field and the reason (code FERRY_PAYLOAD_TOO_LARGE for an oversized payload).
 */
export function validateEnvelope(
  event: OutboxEventInput,
  limits: EnvelopeLimits,
  defaultMaxRetries: number,
): ValidEnvelope {
  if (event === null || typeof event !== 'object') fail('event', 'must be an object');
  const { type } = event as { type: unknown };
  if (typeof type !== 'string' || type.trim().length === 0) fail('type', 'must be a non-empty string');
  if (type.length > limits.maxTypeLength) fail('type', `longer than ${limits.maxTypeLength} characters`);
  const traceparent = optionalText('traceparent', event.traceparent, 55);
  if (traceparent !== null && !TRACEPARENT.test(traceparent)) fail('traceparent', 'not W3C trace context');
  return {
    id: randomUUID(),
    type,
    payloadJson: validatePayload(event.payload, limits),
    destination: optionalText('destination', event.destination, limits.maxIdLength),
    orderingKey: optionalText('orderingKey', event.orderingKey, limits.maxIdLength),
    tenantId: optionalText('tenantId', event.tenantId, limits.maxIdLength),
    correlationId: optionalText('correlationId', event.correlationId, limits.maxIdLength),
    causationId: optionalText('causationId', event.causationId, limits.maxIdLength),
    headersJson: validateHeaders(event.headers, limits),
    traceparent,
    tracestate: optionalText('tracestate', event.tracestate, MAX_TRACESTATE),
    maxRetries: validateMaxRetries(event.maxRetries, defaultMaxRetries),
  };
}
