/**
 * Review 82 (outbox, hostile application values), failing on main.
 *
 * What I did: emit, inside an inbox handler (the quick start's pattern: `emit(tx, …)` in the
 * handler), an event object that cannot be read: a `payload` getter that throws, and a Proxy whose
 * ownKeys trap throws (an ORM entity, a revoked Immer draft). Outside a handler the same values
 * are refused with FerryValidationError (test/hostileValues.test.ts: "never the application's raw
 * error escaping from inside ferry").
 *
 * What happened: inside the handler emit rejects with the application's raw Error ("getter
 * exploded", "trap exploded"), not a FerryError. In a handler emit first copies the event to add
 * the inherited correlation / causation / trace context (inheritScope in tracing/messageScope.ts:
 * `{ ...event, ...inherited }` and reads of `event.correlationId`, …), and that copy runs before
 * validateEnvelope's guard, so the throw escapes untranslated. The handler's error is then an
 * arbitrary Error, retried as a transient failure, instead of ferry's non-retriable validation
 * error naming the event.
 *
 * What should happen: the same as outside a handler: the getter's event refused with
 * FerryValidationError (field `event`, "could not be read: …"), nothing inserted; the Proxy's event,
 * whose fields read fine (only listing its keys throws), inserted as outside a handler, where emit
 * never lists them.
 *
 * Where: packages/core/src/outbox/emit.ts (emitMany: `inheritScope(event, …)` is evaluated outside
 * validateEnvelope's try) and tracing/messageScope.ts (inheritScope reads and spreads the event).
 */
import { createInbox, emit, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const throwingGetter = (): OutboxEventInput =>
  ({
    type: 'order.created',
    get payload(): Record<string, unknown> {
      throw new Error('getter exploded');
    },
  }) as OutboxEventInput;
const throwingProxy = (): OutboxEventInput =>
  new Proxy(
    { type: 'order.created', payload: {} },
    {
      ownKeys() {
        throw new Error('trap exploded');
      },
    },
  );

describe('review82: an unreadable event emitted inside an inbox handler', () => {
  it('is answered as outside a handler: FerryValidationError or inserted, never a raw error', async () => {
    const outside = await Promise.all(
      [throwingGetter(), throwingProxy()].map((event) =>
        emit(t.db, event).then(
          () => 'inserted',
          (e: unknown) => (e instanceof FerryValidationError ? 'FerryValidationError' : `raw: ${String(e)}`),
        ),
      ),
    );
    const inside: string[] = [];
    const inbox = createInbox(t.prisma, {
      global: 'shared',
      handlers: {
        orders: async (_payload, { tx }) => {
          for (const event of [throwingGetter(), throwingProxy()]) {
            inside.push(
              await emit(tx, event).then(
                () => 'inserted',
                (e: unknown) =>
                  e instanceof FerryValidationError ? 'FerryValidationError' : `raw: ${String(e)}`,
              ),
            );
          }
        },
      },
    });
    try {
      await inbox.accept({ consumer: 'orders', messageId: 'r82-hostile', tenantId: null, payload: {} });
      await inbox.runOnce();
    } finally {
      await inbox.close();
    }
    // Outside a handler: the getter is refused, the Proxy (whose fields read fine) inserted.
    expect(outside).toEqual(['FerryValidationError', 'inserted']);
    // On main: ['raw: Error: getter exploded', 'raw: Error: trap exploded'].
    expect({ getter: inside[0], proxy: inside[1] }).toEqual({
      getter: 'FerryValidationError',
      proxy: expect.stringMatching(/^(inserted|FerryValidationError)$/) as unknown as string,
    });
  });
});
