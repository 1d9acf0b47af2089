/**
 * Review 82 (outbox, hostile application values), failing on main.
 *
 * What I did: emit payloads whose JSON, as JSON.stringify writes it, is not the value emit's
 * checks walked:
 * 1. a Date subclass whose `toISOString` returns something else than a string (a class that
 *    serializes itself: `{ epochMs: 2 ** 60 }`). Date.prototype.toJSON returns whatever
 *    `this.toISOString()` returns, and JSON.stringify writes that;
 * 2. a Date whose own `valueOf` says NaN (Date.prototype.toJSON returns null when ToPrimitive
 *    of the date is not finite);
 * 3. a getter (or Proxy) that answers the check and then, read a second time, undefined;
 * 4. an array with named properties, as String.prototype.match returns one (`index`, `input`,
 *    `groups`): the walk visits an array's indexes only, JSON.stringify writes only those.
 *
 * What happened: all three are stored. jsonFault (validate/json.ts) accepts any `instanceof Date`
 * whose toJSON is Date.prototype.toJSON and whose getTime() is a number, and reads each property
 * once; validatePayload then calls JSON.stringify, which reads everything again by its own rules.
 * Stored: `{"at": {"epochMs": 1152921504606847000}}` (an integer beyond 2^53-1, which emit
 * documents refusing and which every ferry consumer dead-letters as unparseable_body),
 * `{"at": null}` (an invalid Date, documented refused, "serializes as null"), `{}` (the
 * checked key dropped), and `{"match": ["b"]}` (index, input and groups dropped).
 *
 * What should happen: docs/outbox.md and README "What a payload, id and header may hold": "ferry
 * never changes a payload on its way through JSON and PostgreSQL without a word; what it cannot
 * keep exactly is refused, naming where": an integer beyond 2^53-1, an invalid Date and class
 * instances are refused (FerryValidationError, field `payload.at`), and what is stored is what was
 * checked. E.g. check the value JSON.stringify produced (or build the text in the walk itself)
 * rather than the object before it.
 *
 * Where: packages/core/src/validate/json.ts (scalarFault's Date branch; the walk reads each value
 * once) and outbox/envelope/validate.ts (validatePayload serializes what was walked, again).
 */
import { emit, FerryValidationError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

class EpochDate extends Date {
  override toISOString(): string {
    return { epochMs: 2 ** 60 } as unknown as string;
  }
}

function dateValuedNaN(): Date {
  const date = new Date('2026-01-01T00:00:00Z');
  Object.defineProperty(date, 'valueOf', { value: () => Number.NaN });
  return date;
}

function answersOnce(): Record<string, unknown> {
  let reads = 0;
  return new Proxy({ at: 'checked' } as Record<string, unknown>, {
    get(target, key, receiver) {
      if (key === 'at') return (reads += 1) === 1 ? 'checked' : undefined;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

async function outcome(payload: Record<string, unknown>): Promise<string> {
  try {
    const { id } = await emit(t.db, { type: 'x', payload });
    const [row] = await t.db.query<{ p: string }>(
      'SELECT payload::text AS p FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    return `stored ${row!.p}`;
  } catch (error) {
    return error instanceof FerryValidationError ? `refused ${error.field}` : `raw ${String(error)}`;
  }
}

describe('review82: what emit checks is what it stores', () => {
  it('a Date subclass serializing as an unsafe integer is refused', async () => {
    // On main: stored {"at": {"epochMs": 1152921504606847000}}.
    expect(await outcome({ at: new EpochDate() })).toMatch(/^refused payload\.at/);
  });

  it('a Date that serializes as null is refused as an invalid Date', async () => {
    // On main: stored {"at": null}.
    expect(await outcome({ at: dateValuedNaN() })).toMatch(/^refused payload\.at/);
  });

  it('an array with named properties is refused, not stored without them', async () => {
    const match = 'abc'.match(/(?<letter>b)/);
    // On main: stored {"match": ["b", "b"]} (index 1, input "abc", groups { letter: "b" } dropped).
    expect(await outcome({ match: match as unknown as string[] })).toMatch(/^refused payload\.match/);
  });

  it('a value read once for the check is the value stored', async () => {
    // On main: stored {} (the key checked as 'checked' is left out of the JSON).
    expect(await outcome(answersOnce())).toMatch(/^(refused payload|stored \{"at": "checked"\})/);
  });
});
