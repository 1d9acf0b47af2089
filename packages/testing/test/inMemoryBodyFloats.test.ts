/**
 * Defect (failed first): large doubles as Python (`1e+20`) and Java (`1.5E17`) write them are
 * floats, read as the nearest double; their value is an integer from 2^53 to 1e21, which the
 * inbox refused after the in-memory consumer had parsed the body (inbox_invalid), and the worker
 * refused again when jsonb wrote them back as digits. The same value written as digits is still
 * dead-lettered as unparseable_body, as by every transport.
 */
import { FERRY_HEADERS, INBOX_TABLE, Inbox } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const SENT: Array<[string, string]> = [
  ['floats', '{"amount":1.5e17,"n":1e20,"neg":-2.5e18}'],
  ['java', '{"list":[1.5E17,-9.2E+18],"f":150000000000000000.0}'],
  ['digits', '{"amount":150000000000000000}'],
  // Jackson's BigDecimal 1234567890123456780, and a float in an array: neither prints back as itself.
  ['inexact', '{"orderId":1.23456789012345678E+18}'],
  ['zero-fraction', '{"ids":[1,-9007199254740993.0]}'],
];

/** The message ids the inbox stored for consumer 'billing'. */
async function stored(): Promise<string[]> {
  const rows = await t.db.query<{ message_id: string }>(
    `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
  );
  return rows.map((row) => row.message_id);
}

test('a body with floats from 2^53 to 1e21 reaches the handler as exactly those doubles', async () => {
  const seen: unknown[] = [];
  const inbox = new Inbox(t.prisma, {
    global: 'shared',
    handlers: {
      billing: async (payload: unknown) => {
        seen.push(payload);
      },
    },
  });
  const broker = new InMemoryBroker();
  broker.declareQueue('q');
  for (const [id, body] of SENT) {
    broker.send('q', { body: Buffer.from(body), headers: { [FERRY_HEADERS.messageId]: id } });
  }
  const consumer = attachInMemoryConsumer(inbox, { broker, queue: 'q', consumer: 'billing' });
  try {
    await waitUntil('every delivery stored or dead-lettered', async () =>
      broker.deadLetters('q').length + (await stored()).length === SENT.length ? true : undefined,
    );
    expect(
      broker
        .deadLetters('q')
        .map((letter) => [letter.delivery.headers[FERRY_HEADERS.messageId], letter.reason])
        .sort(),
    ).toEqual([
      ['digits', 'unparseable_body'],
      ['inexact', 'unparseable_body'],
      ['zero-fraction', 'unparseable_body'],
    ]);
    expect(await stored()).toEqual(['floats', 'java']);

    expect(await inbox.runOnce()).toMatchObject({ claimed: 2, completed: 2, dead: 0 });
    expect(seen).toEqual(
      expect.arrayContaining([
        { amount: 1.5e17, n: 1e20, neg: -2.5e18 },
        { list: [1.5e17, -9.2e18], f: 1.5e17 },
      ]),
    );
    expect(seen).toHaveLength(2);
  } finally {
    await consumer.close();
    await inbox.close();
  }
});
