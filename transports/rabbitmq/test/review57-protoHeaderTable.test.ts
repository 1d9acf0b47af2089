/**
 * Review 57: a delivery whose AMQP header table holds a field named `__proto__`.
 *
 * What a user sees: a producer sends a header table with one field, `__proto__`, a nested table
 * holding `x-ferry-message-id` and `x-ferry-tenant-id`, and the AMQP messageId `outer`. Every
 * other AMQP reader (the Java client, the management UI, ferry's own dead-letter copy, the
 * receipt's stored headers) sees no ferry header on it: one field named `__proto__`. amqplib
 * decodes the table with `fields[key] = val`, which makes the nested table the prototype of the
 * headers object, and ferry reads its identity and tenant with `headers[name]`, so the receipt is
 * stored under the nested table's message id, in the nested table's tenant: a producer or a
 * gateway that strips or checks top-level `x-ferry-tenant-id` headers is bypassed, and the id
 * the broker shows (`outer`) names no receipt. Expected: ferry reads its headers from the
 * table's own fields only: the delivery is accepted as `outer` (no tenant), or dead-lettered.
 *
 * The same decode loses a plain header named `__proto__` (`fields['__proto__'] = 'p'` is a no-op)
 * and keeps the last value of a field named twice: ferry receives amqplib's decoded object and
 * cannot see either (README, "Header tables amqplib cannot decode faithfully"); those two cases of
 * review 57 stay on wip/review57.
 */
import { FERRY_HEADERS, Inbox, INBOX_TABLE } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import { InboxQueue, unackedCount, uniqueName, waitFor } from './support/broker';

describe('review57: a header table field named __proto__', () => {
  const setup = new InboxQueue('r57-proto');

  it('never takes ferry identity or tenant from inside a nested table named __proto__; the neighbours are accepted', async () => {
    const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue: setup.queue,
      consumer: 'billing',
    });
    setup.attached = consumer;
    await consumer.ready();
    const run = uniqueName('p');
    const id = (name: string) => `${run}-${name}`;
    // An own property named __proto__ (as JSON.parse makes it): amqplib encodes it as a field table.
    const hostileHeaders = JSON.parse(
      JSON.stringify({
        '': { 'x-ferry-message-id': id('inner'), 'x-ferry-tenant-id': `${run}-victim` },
      }).replace('""', '"__proto__"'),
    ) as Record<string, unknown>;
    const send = (messageId: string, headers: Record<string, unknown>) =>
      setup.broker.channel.sendToQueue(setup.queue, Buffer.from('{"n":1}'), {
        messageId,
        contentType: 'application/json',
        headers,
      });
    send(id('good-1'), {});
    send(id('outer'), hostileHeaders);
    send(id('good-2'), {});

    await waitFor('the queue drained', async () =>
      (await setup.broker.readyCount(setup.queue)) === 0 && (await unackedCount(setup.queue)) === 0
        ? true
        : undefined,
    );
    await waitFor('the neighbours accepted', async () => {
      const counted = await setup.database.db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM ${INBOX_TABLE} WHERE message_id IN ($1, $2)`,
        [id('good-1'), id('good-2')],
      );
      return counted[0]?.n === '2' ? true : undefined;
    });
    const rows = await setup.database.db.query<{ message_id: string; tenant_id: string | null }>(
      `SELECT message_id, tenant_id FROM ${INBOX_TABLE} WHERE message_id LIKE $1 ORDER BY message_id`,
      [`${run}-%`],
    );
    // Observed on main: [{ message_id: `${run}-inner`, tenant_id: `${run}-victim` }, good-1, good-2].
    expect(rows.map((row) => row.message_id)).not.toContain(id('inner'));
    expect(rows.map((row) => row.tenant_id)).not.toContain(`${run}-victim`);
    // Which ferry headers it carries cannot be told from amqplib's decode: dead-lettered, named.
    expect(rows.map((row) => row.message_id)).not.toContain(id('outer'));
    const dead = await setup.broker.drain(`${setup.queue}.dlq`);
    expect(
      dead.map((m) => [m.properties.messageId, m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
    ).toEqual([[id('outer'), 'ambiguous_header']]);
  });
});
