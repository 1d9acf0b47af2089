/**
 * Review 69: the exception a parsed body gets from acceptance's "integer beyond 2^53-1" rule
 * (a70feb9: parsedBodies.ts, parsedNumberFault).
 *
 * 1. The exception is keyed on the payload object, not on the numbers the body held: every number
 *    found anywhere under that object at acceptance is excused, also one the application put there
 *    after parsing (a custom transport adding a Kafka offset it read as a Number). accept() refuses
 *    the very same value in any other object (README: "a value handed over cannot be known to be a
 *    float").
 * 2. It excuses every integer-valued float, not only the doubles it was made for (Python's
 *    `1e+16`, Java's `1.5E17`, which are exactly the double they read as). An exact integer a Java
 *    service writes with an exponent (Jackson writes a BigDecimal by its toString():
 *    `new BigDecimal("1234567890123456780").stripTrailingZeros()` is `1.23456789012345678E+18`)
 *    is accepted and reaches the handler as 1234567890123456800 (exactly 1234567890123456768),
 *    another id. Before the change it was dead-lettered ("integer beyond 2^53-1 ... send it as a
 *    string"); the README opens the section with "what it cannot keep exactly is refused".
 */
import { parseJsonObjectBody } from '@ferry/core/transport';
import type { Inbox } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function parsed(body: string): Record<string, unknown> {
  const result = parseJsonObjectBody(body);
  if (!result.ok) throw new Error(`body refused: ${result.detail}`);
  return result.payload;
}

const unsafe = ['inbox_invalid', expect.stringContaining('integer beyond 2^53-1')];

describe('review 69: a parsed payload launders numbers the application adds to it', () => {
  const consumer = 'c-mutated';
  let inbox: Inbox<unknown>;
  beforeAll(() => {
    inbox = makeInbox(t.prisma, { handlers: { [consumer]: async () => undefined } }) as Inbox<unknown>;
  });

  async function acceptance(payload: Record<string, unknown>): Promise<unknown> {
    try {
      await inbox.accept(message({ consumer, payload }));
      return 'accepted';
    } catch (error) {
      const details = (error as { details?: { rule?: string; reason?: string } }).details;
      return [details?.rule, details?.reason];
    }
  }

  test('an unsafe integer the application sets on a parsed body after parsing is refused, as in any other object', async () => {
    // A custom transport enriching the decoded body: Kafka offsets are int64 strings, and
    // Number('9007199254740993') is already 9007199254740992.
    const offset = Number('9007199254740993');
    expect(await acceptance({ n: 1, offset })).toEqual(unsafe); // the rule, on the application's own object

    const body = parsed('{"n":1}');
    body.offset = offset;
    const nested = parsed('{"n":1}');
    nested.meta = { offset };
    expect({ set: await acceptance(body), nested: await acceptance(nested) }).toEqual({
      set: unsafe,
      nested: unsafe,
    });
  });
});

describe('review 69: an integer written with an exponent that JavaScript cannot keep is accepted as another number', () => {
  test("Jackson's BigDecimal 1.23456789012345678E+18 (the id 1234567890123456780) is not handed to the handler as another id", async () => {
    const consumer = 'c-bigdecimal';
    const handed: string[] = [];
    const inbox = makeInbox(t.prisma, {
      handlers: {
        [consumer]: async (payload: Readonly<Record<string, unknown>>) => {
          handed.push(BigInt(payload['orderId'] as number).toString());
        },
      },
    }) as Inbox<unknown>;
    const body = parseJsonObjectBody('{"orderId":1.23456789012345678E+18}');
    let outcome: unknown;
    if (!body.ok) outcome = ['unparseable_body', body.detail];
    else {
      try {
        await inbox.accept(message({ consumer, payload: body.payload }));
        outcome = 'accepted';
        await inbox.runOnce();
      } catch (error) {
        const details = (error as { details?: { rule?: string; reason?: string } }).details;
        outcome = [details?.rule, details?.reason];
      }
    }
    // Refused, naming the number (as the same id written as digits is), not handed over changed.
    expect({ outcome, handed }).toEqual({
      outcome: [expect.any(String), expect.stringContaining('2^53-1')],
      handed: [],
    });
  });
});
