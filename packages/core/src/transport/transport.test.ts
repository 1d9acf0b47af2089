import { FERRY_HEADERS, type OutboxMessage } from '../contracts';
import { FerryConfigError } from '../errors';
import { backoffDelay, resolveBackoff } from '../backoff';
import { outboxHeaders, readFerryHeaders, type UnreadableHeader } from './headers';
import { integerOption, nonEmptyOption } from '../optionChecks';

const message: OutboxMessage = {
  id: 'm-1',
  type: 'order.placed',
  payload: {},
  destination: null,
  orderingKey: null,
  tenantId: null,
  correlationId: 'c-1',
  causationId: null,
  headers: { 'x-app': 'shop', [FERRY_HEADERS.messageId]: 'forged', [FERRY_HEADERS.tenantId]: 'forged' },
  traceparent: null,
  tracestate: null,
  attempt: 1,
  createdAt: new Date(0),
};

describe('transport helpers', () => {
  it('computes capped exponential backoff with injected jitter', () => {
    const policy = { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 'none' } as const;
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, policy))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
    expect(backoffDelay(3, { ...policy, jitter: 'full' }, () => 0.5)).toBe(200);
  });

  it('validates backoff policies and options with FerryConfigError', () => {
    const defaults = { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 'full' } as const;
    expect(resolveBackoff('retry', { maxMs: 500 }, defaults)).toEqual({ ...defaults, maxMs: 500 });
    expect(() => resolveBackoff('retry', { maxMs: 50 }, defaults)).toThrow(FerryConfigError);
    expect(() => resolveBackoff('retry', { multiplier: 0.5 }, defaults)).toThrow('retry.multiplier');
    expect(() => integerOption('n', 1.5, 0)).toThrow('must be an integer between 0 and');
    expect(() => nonEmptyOption('name', '')).toThrow('must be a non-empty string');
  });

  it('overlays ferry headers on the event headers', () => {
    const removed = outboxHeaders(message);
    expect(removed[FERRY_HEADERS.messageId]).toBe('m-1');
    expect(removed[FERRY_HEADERS.correlationId]).toBe('c-1');
    expect(removed).not.toHaveProperty(FERRY_HEADERS.tenantId);
  });

  it('reads ferry headers, treating empty values as absent', () => {
    const values: Record<string, string> = { [FERRY_HEADERS.messageId]: 'm-1', [FERRY_HEADERS.tenantId]: '' };
    expect(readFerryHeaders((name) => values[name])).toEqual({
      messageId: 'm-1',
      tenantId: undefined,
      eventType: undefined,
      fault: null,
    });
  });

  it('decodes ferry header bytes as strict UTF-8: bytes that are not read as undefined with a fault naming each header', () => {
    const bytes: Record<string, Uint8Array> = {
      [FERRY_HEADERS.messageId]: Buffer.from('m-é'),
      [FERRY_HEADERS.tenantId]: new Uint8Array([0x61, 0xff]),
      [FERRY_HEADERS.eventType]: new Uint8Array([0xfe, 0x61]),
    };
    expect(readFerryHeaders((name) => bytes[name])).toEqual({
      messageId: 'm-é',
      tenantId: undefined,
      eventType: undefined,
      fault: `the ${FERRY_HEADERS.tenantId} header is bytes that are not valid UTF-8; the ${FERRY_HEADERS.eventType} header is bytes that are not valid UTF-8`,
    });
  });

  it('reads a ferry header the transport reports unreadable as undefined with a fault naming it, never as absent', () => {
    const values: Record<string, string | UnreadableHeader> = {
      [FERRY_HEADERS.messageId]: { unreadable: 'a field table, not text' },
      [FERRY_HEADERS.tenantId]: 'acme',
    };
    expect(readFerryHeaders((name) => values[name])).toEqual({
      messageId: undefined,
      tenantId: 'acme',
      eventType: undefined,
      fault: `the ${FERRY_HEADERS.messageId} header is a field table, not text`,
    });
  });
});
