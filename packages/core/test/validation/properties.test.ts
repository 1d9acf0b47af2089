/**
 * Property: any string or JSON value either round-trips through PostgreSQL unchanged (emit or
 * accept, read back, deep-equal) or is refused with a validation error; never a database
 * error. Strings mix every code point with NUL, lone surrogates and escape look-alikes.
 * fast-check prints the seed and the shrunk counterexample when a property fails.
 */
import fc from 'fast-check';
import {
  emit,
  FerryValidationError,
  INBOX_INPUT_LIMITS,
  isFerryError,
  type OutboxEventInput,
} from '@ferry/core';
import { jsonFault, serializedTextFault } from '../../src/validate/json';
import { identifierFault, textFault } from '../../src/validate/text';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox } from '../inbox/helpers';

const hostileUnit = fc.oneof(
  { weight: 12, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('\u0000', '\\', '"', '\\u0000', '\ufffd', '\uffff', '\ud83d\ude00'),
  },
);
type Unit = 'binary' | typeof hostileUnit;
const stringOf = (unit: Unit, maxLength = 12) => fc.string({ unit, maxLength });
const hostileString = (maxLength = 12) => stringOf(hostileUnit, maxLength);

/**
 * Half the runs draw every string from all code points (so most should be stored), half
 * from the hostile unit (so most should be refused).
 */
function envelopeParts(unit: Unit) {
  return fc.record({
    consumer: stringOf(unit),
    messageId: stringOf(unit),
    type: stringOf(unit),
    orderingKey: stringOf(unit),
    tenantId: stringOf(unit),
    headers: fc.dictionary(stringOf(unit, 8), stringOf(unit, 8), { maxKeys: 4 }),
    value: fc.jsonValue({ stringUnit: unit, maxDepth: 4 }),
    key: stringOf(unit),
  });
}
const parts = fc.constantFrom<Unit>('binary', hostileUnit).chain(envelopeParts);

/**
 * The oracle of refusal, independent of src/validate: a string is unstorable when UTF-8 does not
 * carry it unchanged (an unpaired surrogate) or it holds NUL. A property that only checks "stored
 * unchanged, or refused with a validation code" passes a validator that refuses too much.
 */
const unstorable = (s: string): boolean =>
  Buffer.from(s, 'utf8').toString('utf8') !== s || s.includes('\u0000');

/**
 * A number JSON would not carry unchanged, independent of src/validate: -0 (written as 0), or an
 * integer beyond 2^53-1 that JSON writes as digits (below 1e21; larger ones get an exponent).
 */
const changedByJson = (n: number): boolean =>
  Object.is(n, -0) || (Number.isInteger(n) && Math.abs(n) > 2 ** 53 - 1 && Math.abs(n) < 1e21);

/** Every number of a JSON value. */
function numbersOf(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (Array.isArray(value)) return value.flatMap(numbersOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(numbersOf);
  return [];
}

/** Every string of a JSON value, object keys included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, child]) => [key, ...stringsOf(child)]);
  }
  return [];
}

/** What PostgreSQL hands back for a value it stored faithfully: its JSON form. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('text and JSON validation (pure)', () => {
  it('a string passes textFault exactly when UTF-8 carries it unchanged and it has no NUL', () => {
    fc.assert(
      fc.property(hostileString(24), (s) => {
        const survives = Buffer.from(s, 'utf8').toString('utf8') === s && !s.includes('\u0000');
        expect(textFault(s) === null).toBe(survives);
      }),
      { numRuns: 2_000 },
    );
  });

  it('JSON.stringify of a string is refused by serializedTextFault exactly when textFault refuses the string', () => {
    fc.assert(
      fc.property(hostileString(24), (s) => {
        expect(serializedTextFault(JSON.stringify({ [s]: [s] })) === null).toBe(textFault(s) === null);
      }),
      { numRuns: 2_000 },
    );
  });

  it('nesting is refused exactly above the limit, at any depth, without recursion', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), fc.boolean(), (depth, arrays) => {
        let value: unknown = arrays ? [] : {};
        for (let level = 1; level < depth; level += 1) value = arrays ? [value] : { d: value };
        const fault = jsonFault(value, INBOX_INPUT_LIMITS.maxPayloadDepth);
        expect(fault?.rule ?? null).toBe(
          depth > INBOX_INPUT_LIMITS.maxPayloadDepth ? 'payload_too_deep' : null,
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('round trip through PostgreSQL or a validation error', () => {
  it('emit: every envelope string and payload value is stored unchanged or refused before SQL', async () => {
    const seen = { stored: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(parts, async ({ type, orderingKey, tenantId, headers, value, key }) => {
        const event: OutboxEventInput = {
          type,
          payload: { [key]: value, list: [value] },
          orderingKey: orderingKey || null,
          tenantId: tenantId || null,
          headers,
        };
        const outcome = await emit(t.db, event).catch((e: unknown) => e);
        const expectRefused =
          [type, orderingKey, tenantId, ...stringsOf(headers), ...stringsOf(event.payload)].some(
            unstorable,
          ) ||
          type.trim().length === 0 ||
          (tenantId !== '' && identifierFault(tenantId) !== null) ||
          numbersOf(event.payload).some(changedByJson) ||
          Object.keys(headers).some(
            (name) => name.length === 0 || /^(x-ferry-|traceparent$|tracestate$)/i.test(name),
          );
        expect(outcome instanceof Error).toBe(expectRefused);
        if (outcome instanceof Error) {
          expect(outcome).toBeInstanceOf(FerryValidationError);
          expect(outcome).toMatchObject({ retriable: false });
          seen.refused += 1;
          return;
        }
        const [row] = await t.db.query<Record<string, unknown>>(
          `SELECT event_type, payload, ordering_key, tenant_id, headers FROM outbox_events WHERE id = $1::uuid`,
          [(outcome as { id: string }).id],
        );
        expect(row).toEqual({
          event_type: type,
          payload: asJson(event.payload),
          ordering_key: event.orderingKey,
          tenant_id: event.tenantId,
          headers,
        });
        seen.stored += 1;
      }),
      { numRuns: 150 },
    );
    expect(seen.stored).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('accept: every delivery is stored unchanged or is an invalid result; acceptMany never throws', async () => {
    const inbox = makeInbox(t.prisma);
    const seen = { stored: 0, refused: 0 };
    let sequence = 0;
    await fc.assert(
      fc.asyncProperty(parts, async ({ consumer, messageId, tenantId, type, headers, value, key }) => {
        sequence += 1;
        const input = {
          consumer: `c${consumer}`,
          messageId: `${sequence}-${messageId}`,
          tenantId: `t${tenantId}`,
          type: type || null,
          headers,
          payload: { [key]: value, list: [value] },
        };
        const [result] = await inbox.acceptDetailed([input]);
        const expectRefused =
          [
            input.consumer,
            input.messageId,
            input.tenantId,
            type,
            ...stringsOf(headers),
            ...stringsOf(input.payload),
          ].some(unstorable) ||
          Object.keys(headers).some((name) => name.length === 0) ||
          numbersOf(input.payload).some(changedByJson) ||
          // An id must show something and hold no control, line break (U+2028, U+2029) or bidi control.
          [input.messageId, input.tenantId].some((id) => identifierFault(id) !== null);
        expect(result?.kind === 'invalid').toBe(expectRefused);
        if (result?.kind === 'invalid') {
          expect(['FERRY_VALIDATION_FAILED', 'FERRY_PAYLOAD_TOO_LARGE']).toContain(result.code);
          seen.refused += 1;
          return;
        }
        expect(result?.kind).toBe('accepted');
        const record = result && 'record' in result ? result.record : undefined;
        expect(record).toMatchObject({
          consumer: input.consumer,
          messageId: input.messageId,
          tenantId: input.tenantId,
          messageType: input.type,
          headers,
        });
        expect(record?.payload).toEqual(asJson(input.payload));
        seen.stored += 1;
      }),
      { numRuns: 150 },
    );
    expect(seen.stored).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('a database-refused value is never reported as a database outage', async () => {
    const inbox = makeInbox(t.prisma);
    await fc.assert(
      fc.asyncProperty(hostileString(), async (s) => {
        const error = await inbox
          .accept({ consumer: 'c', messageId: `x-${Math.random()}`, tenantId: 't', payload: { s } })
          .then(() => null)
          .catch((e: unknown) => e);
        expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(false);
        expect(error === null || isFerryError(error, 'FERRY_VALIDATION_FAILED')).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
