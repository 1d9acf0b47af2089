/**
 * Hostile deliveries in one burst into the real @ferry/core inbox (its batch is one JSON
 * parameter): each is accepted with the value JSON.parse gave, or dead-lettered with its reason,
 * and never fails its neighbours.
 */
import { FERRY_HEADERS, Inbox, INBOX_TABLE } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import type { GetMessage, Options } from 'amqplib';
import { InboxQueue, unackedCount, uniqueName, waitFor } from './support/broker';

describe('RabbitMQ hostile deliveries into the @ferry/core inbox', () => {
  const setup = new InboxQueue('inbox-hostile');
  const { queue } = setup;

  it('accepts the valid neighbours and dead-letters NUL and lone surrogates by reason', async () => {
    const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
    });
    setup.attached = consumer;
    await consumer.ready();
    const run = uniqueName('h');
    const id = (name: string) => `${run}-${name}`;
    const sent: Array<[string, Buffer | string, Options.Publish['headers']?]> = [
      [id('good-1'), '{"n":1}'],
      [
        id('bad-utf8'),
        Buffer.concat([Buffer.from('{"s":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]),
      ],
      [id('nul-escape'), '{"note":"a\\u0000b"}'],
      [id('literal-escape'), '{"note":"a\\\\u0000b"}'],
      [id('lone-surrogate'), '{"s":"\\ud800"}'],
      [id('nul-header'), '{"n":5}', { h: Buffer.from([0x61, 0x00]) }],
      [id('big-number'), '{"big":9007199254740993,"tiny":5e-324}'],
      [id('emoji-\u200f-🚀'), '{"k":"\u202e🚀"}', { 'x-\u200f': '🚀' }],
      [id('long'), JSON.stringify({ s: '€'.repeat(60_000) })],
      [id('good-2'), '{"n":2}'],
    ];
    for (const [messageId, body, headers] of sent) {
      setup.broker.channel.sendToQueue(queue, Buffer.from(body), {
        messageId,
        contentType: 'application/json',
        headers: headers ?? {},
      });
    }
    const expectedDead = new Map([
      [id('bad-utf8'), 'unparseable_body'],
      [id('nul-escape'), 'invalid_text'],
      [id('lone-surrogate'), 'invalid_text'],
      [id('nul-header'), 'invalid_text'],
    ]);
    const letters: GetMessage[] = [];
    await waitFor('every delivery settled', async () => {
      letters.push(...(await setup.broker.drain(`${queue}.dlq`)));
      return letters.length >= expectedDead.size &&
        (await setup.broker.readyCount(queue)) === 0 &&
        (await unackedCount(queue)) === 0
        ? true
        : undefined;
    });
    expect(
      new Map(
        letters.map((m) => [
          m.properties.messageId as string,
          m.properties.headers?.[FERRY_HEADERS.rejectReason],
        ]),
      ),
    ).toEqual(expectedDead);
    const rows = await setup.database.db.query<{ message_id: string; payload: unknown; headers: unknown }>(
      `SELECT message_id, payload, headers FROM ${INBOX_TABLE} WHERE message_id LIKE $1`,
      [`${run}-%`],
    );
    const stored = new Map(rows.map((row) => [row.message_id, row]));
    const acceptedIds = sent
      .map(([messageId]) => messageId)
      .filter((messageId) => !expectedDead.has(messageId));
    expect([...stored.keys()].sort()).toEqual(acceptedIds.sort());
    expect(stored.get(id('literal-escape'))?.payload).toEqual({ note: 'a\\u0000b' });
    expect(stored.get(id('big-number'))?.payload).toEqual(
      JSON.parse('{"big":9007199254740993,"tiny":5e-324}'),
    );
    expect(stored.get(id('emoji-\u200f-🚀'))).toMatchObject({
      payload: { k: '\u202e🚀' },
      headers: { 'x-\u200f': '🚀' },
    });
    expect(stored.get(id('long'))?.payload).toEqual({ s: '€'.repeat(60_000) });
  });
});
