/**
 * Review 46: a producer chooses the tenant of its message through `x-ferry-origin-user-id`.
 *
 * What I did: the setup of review43-retryUserId.test.ts (one queue shared by several tenants, each
 * producer its own RabbitMQ user, the tenant read from the validated AMQP `user-id`:
 * `tenant: (m) => m.properties.userId ?? null`, the README's "the one property a sender cannot
 * choose"; the inbox takes global messages, `global: 'shared'`). A producer publishes a message
 * WITHOUT a user-id property (RabbitMQ allows that) but with the header
 * `x-ferry-origin-user-id: victim-tenant`. Its first acceptance fails with a retriable error, so the
 * delivery goes round a retry tier queue (a genuine retry return: x-death names the tier, reason
 * expired).
 *
 * What happened: DeliverySettler (batch.ts) writes ORIGIN_HEADERS.userId on the retry copy only
 * when the first delivery had a user-id; copyHeaders keeps every header of the delivery under
 * ferry's. So the producer's own `x-ferry-origin-user-id` survives into the copy, and deliveredAs()
 * (retryTiers.ts), trusting the header on a retry return, restores `properties.userId =
 * 'victim-tenant'`: the tenant function answers `victim-tenant` and the message is committed in
 * another tenant's scope, run by that tenant's handler context. The first delivery resolved to the
 * global scope (no user-id).
 *
 * What should happen: a trip round the retry tiers keeps what the tenant function read on the first
 * delivery (README), and a header a producer sets never stands in for the validated user-id: the
 * receipt is in the global scope (tenant_id null), as its first delivery resolved.
 *
 * Second case, no failure needed: the producer publishes straight to the work queue through the
 * default exchange with an `x-death` header it wrote ([{ queue: <first tier queue>, reason:
 * 'expired' }]; the tier names follow from the queue's) and the three origin headers. RabbitMQ
 * (3.10 here) delivers a client's x-death as it is, isRetryReturn() takes the delivery for a retry
 * return, and the tenant is `victim-tenant` on the first delivery. Before review 43 this let a
 * producer choose only the exchange and routing key a tenant function read (which it chooses
 * anyway); since, it forges the one property RabbitMQ validates.
 *
 * Fix direction: on the retry (and dead-letter) copy, drop any delivered `x-ferry-origin-*`
 * header before overlaying ferry's (copyHeaders), or always write the user-id header with an explicit
 * "none" value. For the forged x-death: trust the origin user-id only with proof a producer cannot
 * make (e.g. an HMAC of message id + user-id under a per-consumer secret, or the user-id property
 * itself set by the tier queue's own publish), not the x-death header alone.
 */
import { FerryError, Inbox, INBOX_TABLE, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import { attachRabbitConsumer, deleteWorkQueue } from '@ferry/rabbitmq';
import type { Message } from 'amqplib';
import { InboxQueue, uniqueName, unackedCount, waitFor } from './support/broker';

describe('review46: x-ferry-origin-user-id set by a producer', () => {
  const setup = new InboxQueue('r46_forged');
  const { queue } = setup;

  it('never lets a producer header choose the tenant of a delivery that went round a retry tier', async () => {
    const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
    await inbox.initialize();
    const offered: Array<string | null> = [];
    let calls = 0;
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: inbox.maxPayloadBytes,
      acceptMany: (inputs: readonly InboxAcceptInput[]) => {
        calls += 1;
        offered.push(...inputs.map((input) => input.tenantId));
        // One retriable failure that is not an outage: the delivery goes round a retry tier.
        if (calls === 1)
          return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'));
        return inbox.acceptMany(inputs);
      },
    };
    const consumer = attachRabbitConsumer(acceptor, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
      maxTransportRetries: 3,
      retryBackoff: { initialMs: 100, maxMs: 200 },
      tenant: (message: Message) => (message.properties.userId as string | undefined) ?? null,
    });
    setup.attached = consumer;
    await consumer.ready();

    const messageId = uniqueName('m');
    // No user-id property; the header names another tenant.
    setup.broker.channel.sendToQueue(queue, Buffer.from('{"total":42}'), {
      messageId,
      contentType: 'application/json',
      headers: { 'x-ferry-origin-user-id': 'victim-tenant' },
    });

    await waitFor('the receipt committed after the retry trip', async () => {
      const rows = await setup.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE message_id = $1`,
        [messageId],
      );
      return rows[0]!.n > 0 && (await unackedCount(queue)) === 0 ? true : undefined;
    });

    const rows = await setup.database.db.query<{ tenant_id: string | null }>(
      `SELECT tenant_id FROM ${INBOX_TABLE} WHERE message_id = $1`,
      [messageId],
    );
    await consumer.close();
    setup.attached = null;
    await inbox.close();
    await deleteWorkQueue(setup.broker.channel, { queue, retryTiersMs: consumer.names.retryTiersMs });
    // The first delivery had no user-id: the global scope.
    expect(offered[0]).toBeNull();
    // On main: offered[1] is 'victim-tenant' and the receipt is stored as [{ tenant_id: 'victim-tenant' }].
    expect({ retried: offered.slice(1), stored: rows }).toEqual({
      retried: offered.slice(1).map(() => null),
      stored: [{ tenant_id: null }],
    });
  });

  it('never trusts an x-death header a producer wrote: a direct publish cannot name the user-id', async () => {
    const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
    await inbox.initialize();
    const offered: Array<string | null> = [];
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: inbox.maxPayloadBytes,
      acceptMany: (inputs: readonly InboxAcceptInput[]) => {
        offered.push(...inputs.map((input) => input.tenantId));
        return inbox.acceptMany(inputs);
      },
    };
    const consumer = attachRabbitConsumer(acceptor, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
      maxTransportRetries: 3,
      retryBackoff: { initialMs: 100, maxMs: 200 },
      tenant: (message: Message) => (message.properties.userId as string | undefined) ?? null,
    });
    setup.attached = consumer;
    await consumer.ready();

    const messageId = uniqueName('m');
    // Straight to the work queue through the default exchange, as a tier's expiry returns it, with
    // an x-death the producer wrote naming the first tier queue (its name follows from the queue's).
    setup.broker.channel.sendToQueue(queue, Buffer.from('{"total":42}'), {
      messageId,
      contentType: 'application/json',
      headers: {
        'x-death': [
          {
            queue: consumer.names.retryQueues[0],
            reason: 'expired',
            count: 1,
            exchange: '',
            'routing-keys': [consumer.names.retryQueues[0]],
          },
        ],
        'x-ferry-origin-exchange': '',
        'x-ferry-origin-routing-key': queue,
        'x-ferry-origin-user-id': 'victim-tenant',
      },
    });

    await waitFor('the receipt committed', async () => {
      const rows = await setup.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE message_id = $1`,
        [messageId],
      );
      return rows[0]!.n > 0 && (await unackedCount(queue)) === 0 ? true : undefined;
    });
    const rows = await setup.database.db.query<{ tenant_id: string | null }>(
      `SELECT tenant_id FROM ${INBOX_TABLE} WHERE message_id = $1`,
      [messageId],
    );
    await consumer.close();
    setup.attached = null;
    await inbox.close();
    await deleteWorkQueue(setup.broker.channel, { queue, retryTiersMs: consumer.names.retryTiersMs });
    // On main: offered is ['victim-tenant'] and the receipt is stored in that tenant's scope.
    expect({ offered, stored: rows }).toEqual({ offered: [null], stored: [{ tenant_id: null }] });
  });
});
