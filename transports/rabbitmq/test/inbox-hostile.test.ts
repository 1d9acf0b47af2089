/**
 * Hostile deliveries in one burst into the real @ferry/core inbox (its batch is one JSON
 * parameter): each is accepted with the value JSON.parse gave, or dead-lettered with its reason,
 * and never fails its neighbours.
 */
import { FERRY_HEADERS, Inbox, INBOX_TABLE } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import type { GetMessage, Options } from 'amqplib';
import { InboxQueue, unackedCount, uniqueName, waitFor } from './support/broker';

/** Attaches a 'billing' consumer of the real Inbox to the setup's queue; `run` prefixes this test's ids. */
async function attachBilling(setup: InboxQueue): Promise<{ run: string; id: (name: string) => string }> {
  const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
  const consumer = attachRabbitConsumer(inbox, {
    connection: setup.connection,
    queue: setup.queue,
    consumer: 'billing',
  });
  setup.attached = consumer;
  await consumer.ready();
  const run = uniqueName('h');
  return { run, id: (name) => `${run}-${name}` };
}

/** Waits until every delivery is settled and at least `dead` dead letters arrived; returns them. */
async function settled(setup: InboxQueue, dead: number): Promise<GetMessage[]> {
  const letters: GetMessage[] = [];
  await waitFor('every delivery settled', async () => {
    letters.push(...(await setup.broker.drain(`${setup.queue}.dlq`)));
    return letters.length >= dead &&
      (await setup.broker.readyCount(setup.queue)) === 0 &&
      (await unackedCount(setup.queue)) === 0
      ? true
      : undefined;
  });
  return letters;
}

describe('RabbitMQ hostile deliveries into the @ferry/core inbox', () => {
  const setup = new InboxQueue('inbox-hostile');
  const { queue } = setup;

  it('accepts the valid neighbours and dead-letters NUL, lone surrogates and an integer beyond 2^53-1 by reason', async () => {
    const { run, id } = await attachBilling(setup);
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
      [id('big-number'), '{"big":9007199254740993}'],
      [id('tiny-number'), '{"tiny":5e-324,"f":0.30000000000000004}'],
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
      // JSON.parse would read it as 9007199254740992: refused, never stored rounded.
      [id('big-number'), 'unparseable_body'],
    ]);
    const letters = await settled(setup, expectedDead.size);
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
    expect(stored.get(id('tiny-number'))?.payload).toEqual({ tiny: 5e-324, f: 0.30000000000000004 });
    expect(stored.get(id('emoji-\u200f-🚀'))).toMatchObject({
      payload: { k: '\u202e🚀' },
      headers: { 'x-\u200f': '🚀' },
    });
    expect(stored.get(id('long'))?.payload).toEqual({ s: '€'.repeat(60_000) });
    expect(stored.get(id('nul-header'))?.headers).toEqual({});
  });
});

describe('RabbitMQ deliveries with headers that are not storable text, into the @ferry/core inbox', () => {
  const setup = new InboxQueue('inbox-bad-headers');
  const { queue } = setup;

  it('leaves out every header whose name or value is not storable text, accepts its delivery and the neighbours, and still dead-letters an identity with NUL', async () => {
    const { run, id } = await attachBilling(setup);
    const good = { 'x-app': 'kept', 'x-bytes': Buffer.from('Zürich'), 'x-count': 3 };
    const goodStored = { 'x-app': 'kept', 'x-bytes': 'Zürich', 'x-count': '3' };
    const sent: Array<[string, Options.Publish['headers']]> = [
      [id('good-1'), good],
      [id('binary-nul'), { ...good, 'x-bin': Buffer.from([0x01, 0x00, 0x02]) }],
      [id('bad-utf8'), { ...good, 'x-latin1': Buffer.from([0x63, 0x61, 0x66, 0xe9]) }],
      [id('string-nul'), { ...good, 'x-text': 'a\u0000b' }],
      [id('name-nul'), { ...good, 'x-\u0000name': 'value' }],
      [id('good-2'), good],
    ];
    for (const [messageId, headers] of sent) {
      setup.broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
        messageId,
        contentType: 'application/json',
        headers,
      });
    }
    setup.broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
      messageId: id('identity-nul'),
      contentType: 'application/json',
      headers: { ...good, [FERRY_HEADERS.messageId]: Buffer.from(`${id('identity-nul')}\u0000`) },
    });
    const letters = await settled(setup, 1);
    expect(
      letters.map((m) => [
        m.properties.messageId as string,
        m.properties.headers?.[FERRY_HEADERS.rejectReason],
      ]),
    ).toEqual([[id('identity-nul'), 'invalid_text']]);
    const rows = await setup.database.db.query<{ message_id: string; headers: unknown }>(
      `SELECT message_id, headers FROM ${INBOX_TABLE} WHERE message_id LIKE $1`,
      [`${run}-%`],
    );
    expect(new Map(rows.map((row) => [row.message_id, row.headers]))).toEqual(
      new Map(sent.map(([messageId]) => [messageId, goodStored])),
    );
  });
});

describe('RabbitMQ deliveries whose ferry identity or tenant bytes are not UTF-8, into the @ferry/core inbox', () => {
  const setup = new InboxQueue('inbox-identity-bytes');
  const { queue } = setup;

  /** Sends `{"n":1}` with these headers; `x-case` names the delivery in its dead letter. */
  function send(name: string, headers: Options.Publish['headers'], messageId?: string): void {
    setup.broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
      contentType: 'application/json',
      headers: { 'x-case': name, ...headers },
      ...(messageId === undefined ? {} : { messageId }),
    });
  }

  /**
   * Once every delivery is settled (dead letters are confirmed before their ack): the dead
   * letters as [x-case, reject reason, reject detail], in case order.
   */
  async function deadLetters(neighbour: string): Promise<Array<[unknown, unknown, unknown]>> {
    await waitFor('the neighbour accepted', async () => {
      const found = await setup.database.db.query(`SELECT 1 FROM ${INBOX_TABLE} WHERE message_id = $1`, [
        neighbour,
      ]);
      return found.length > 0 ? true : undefined;
    });
    const letters = await settled(setup, 0);
    letters.push(...(await setup.broker.drain(`${queue}.dlq`)));
    return letters
      .map((m): [unknown, unknown, unknown] => [
        m.properties.headers?.['x-case'],
        m.properties.headers?.[FERRY_HEADERS.rejectReason],
        m.properties.headers?.['x-ferry-reject-detail'],
      ])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  }

  it('dead-letters each message id whose bytes are not UTF-8 (ff 61, fe 61) as invalid_text, never one lossy id that loses the second as a duplicate; the neighbour is accepted', async () => {
    const { run, id } = await attachBilling(setup);
    const suffix = Buffer.from(`-${run}`);
    send(
      'fe',
      { [FERRY_HEADERS.messageId]: Buffer.concat([Buffer.from([0xfe, 0x61]), suffix]) },
      id('amqp-fe'),
    );
    send(
      'ff',
      { [FERRY_HEADERS.messageId]: Buffer.concat([Buffer.from([0xff, 0x61]), suffix]) },
      id('amqp-ff'),
    );
    send('ok', { [FERRY_HEADERS.messageId]: Buffer.from(id('ok-é')) });

    const naming = expect.stringContaining(FERRY_HEADERS.messageId);
    expect(await deadLetters(id('ok-é'))).toEqual([
      ['fe', 'invalid_text', naming],
      ['ff', 'invalid_text', naming],
    ]);
    const rows = await setup.database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE message_id LIKE $1`,
      [`%${run}%`],
    );
    expect(rows.map((row) => row.message_id)).toEqual([id('ok-é')]);
  });

  it('dead-letters each tenant whose bytes differ only where they are not UTF-8 as invalid_text, never one lossy tenant scope; the neighbour is accepted', async () => {
    const { run, id } = await attachBilling(setup);
    const tenant = (last: number) => Buffer.concat([Buffer.from(`${run}-`), Buffer.from([last])]);
    send('fe', { [FERRY_HEADERS.messageId]: id('t-fe'), [FERRY_HEADERS.tenantId]: tenant(0xfe) });
    send('ff', { [FERRY_HEADERS.messageId]: id('t-ff'), [FERRY_HEADERS.tenantId]: tenant(0xff) });
    send('ok', { [FERRY_HEADERS.messageId]: id('t-ok'), [FERRY_HEADERS.tenantId]: Buffer.from(`${run}-ü`) });

    const naming = expect.stringContaining(FERRY_HEADERS.tenantId);
    expect(await deadLetters(id('t-ok'))).toEqual([
      ['fe', 'invalid_text', naming],
      ['ff', 'invalid_text', naming],
    ]);
    const rows = await setup.database.db.query<{ message_id: string; tenant_id: string | null }>(
      `SELECT message_id, tenant_id FROM ${INBOX_TABLE} WHERE message_id LIKE $1`,
      [`${run}-%`],
    );
    expect(rows.map((row) => [row.message_id, row.tenant_id])).toEqual([[id('t-ok'), `${run}-ü`]]);
  });
});

/**
 * Defect (failed first): large doubles as Python (`1e+20`) and Java (`1.5E17`) write them are
 * floats, read as the nearest double; their value is an integer from 2^53 to 1e21, which the
 * inbox refused after the body was parsed (inbox_invalid) and the worker refused again when
 * jsonb wrote them back as digits. The same value written as digits is still dead-lettered.
 */
describe('RabbitMQ deliveries with large floats, into the @ferry/core inbox and its handler', () => {
  const setup = new InboxQueue('inbox-floats');
  const { queue } = setup;

  it('accepts them and hands the handler exactly those doubles; the digits of an integer beyond 2^53-1 are dead-lettered', async () => {
    const seen: unknown[] = [];
    const inbox = new Inbox(setup.database.prisma, {
      global: 'shared',
      handlers: {
        billing: async (payload: unknown) => {
          seen.push(payload);
        },
      },
    });
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
    });
    setup.attached = consumer;
    await consumer.ready();
    const run = uniqueName('f');
    const sent: Array<[string, string]> = [
      [`${run}-floats`, '{"amount":1.5e17,"n":1e20,"neg":-2.5e18}'],
      [`${run}-java`, '{"list":[1.5E17,-9.2E+18],"f":150000000000000000.0}'],
      [`${run}-digits`, '{"amount":150000000000000000}'],
      // Jackson's BigDecimal 1234567890123456780, and a float in an array: neither prints back as itself.
      [`${run}-inexact`, '{"orderId":1.23456789012345678E+18}'],
      [`${run}-zero-fraction`, '{"ids":[1,-9007199254740993.0]}'],
    ];
    for (const [messageId, body] of sent) {
      setup.broker.channel.sendToQueue(queue, Buffer.from(body), {
        messageId,
        contentType: 'application/json',
      });
    }
    // Every delivery either stored or dead-lettered.
    const letters: GetMessage[] = [];
    const stored = async () =>
      (
        await setup.database.db.query<{ message_id: string }>(
          `SELECT message_id FROM ${INBOX_TABLE} WHERE message_id LIKE $1 ORDER BY message_id`,
          [`${run}-%`],
        )
      ).map((row) => row.message_id);
    await waitFor('every delivery stored or dead-lettered', async () => {
      letters.push(...(await setup.broker.drain(`${queue}.dlq`)));
      return letters.length + (await stored()).length === sent.length ? true : undefined;
    });
    expect(
      letters.map((m) => [m.properties.messageId, m.properties.headers?.[FERRY_HEADERS.rejectReason]]).sort(),
    ).toEqual([
      [`${run}-digits`, 'unparseable_body'],
      [`${run}-inexact`, 'unparseable_body'],
      [`${run}-zero-fraction`, 'unparseable_body'],
    ]);
    expect(await stored()).toEqual([`${run}-floats`, `${run}-java`]);

    expect(await inbox.runOnce()).toMatchObject({ claimed: 2, completed: 2, dead: 0 });
    expect(seen).toEqual(
      expect.arrayContaining([
        { amount: 1.5e17, n: 1e20, neg: -2.5e18 },
        { list: [1.5e17, -9.2e18], f: 1.5e17 },
      ]),
    );
    expect(seen).toHaveLength(2);
  });
});
