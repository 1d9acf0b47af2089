/**
 * Review 43 (tenant scopes), failing on main.
 *
 * What I did: a queue shared by several tenants, each producer connected as its own RabbitMQ user.
 * The only tenant source RabbitMQ itself vouches for is the AMQP `user-id` property (RabbitMQ
 * refuses a publish whose user-id is not the connection's user: "validated user-id"), so the
 * consumer reads the tenant from it: `tenant: (m) => m.properties.userId ?? null`, as the README
 * allows ("`(message) => string | null`: the function decides alone"). The inbox takes global
 * messages too (`global: 'shared'`). The first acceptance fails with a retriable error that is
 * not an outage (FERRY_DATABASE_ERROR), so the delivery goes round a retry tier queue.
 *
 * What happened: the retry copy is made by copyOptions, which keeps contentType, messageId,
 * correlationId, type, timestamp and appId but drops `userId` (ferry's own connection could not
 * publish another user's id). The delivery that comes back from the tier has no user-id, the
 * tenant function answers null, and the message of tenant `guest` is accepted and committed in
 * the GLOBAL scope: another scope's work, invisible to `forTenant('guest')`, run by the handler
 * with an empty tenant setting (createInboxTenancyContext `global: 'shared'`). With the default
 * `global: 'reject'` the same message is dead-lettered `inbox_invalid` instead: lost to its tenant.
 *
 * What should happen: the README promises "A trip round the retry tiers keeps what these functions
 * read" (it fixed exchange and routing key that way, review 20). The delivery must be accepted
 * under the tenant its first delivery resolved to, `guest`, after any number of trips.
 *
 * Fix direction: record the validated user-id on the retry copy as an origin header
 * (`x-ferry-origin-user-id`, like `x-ferry-origin-exchange` / `-routing-key`) and restore
 * `properties.userId` in deliveredAs() on a retry return only (isRetryReturn), or resolve the
 * tenant once on the first delivery and carry that on the copy; the dead-letter copy likewise.
 */
import { FerryError, Inbox, INBOX_TABLE, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import { attachRabbitConsumer, deleteWorkQueue } from '@ferry/rabbitmq';
import type { Message } from 'amqplib';
import { InboxQueue, uniqueName, unackedCount, waitFor } from './support/broker';

describe('review43: a tenant read from the validated AMQP user-id, across a retry trip', () => {
  const setup = new InboxQueue('r43_userid');
  const { queue } = setup;

  it('accepts the message under the user-id tenant after a trip round the retry tiers, not in the global scope', async () => {
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
    // The test broker's connection is user `guest`: RabbitMQ validates the user-id against it.
    setup.broker.channel.sendToQueue(queue, Buffer.from('{"total":42}'), {
      messageId,
      userId: 'guest',
      contentType: 'application/json',
    });

    await waitFor('the receipt committed after the retry trip', async () => {
      const rows = await setup.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE message_id = $1`,
        [messageId],
      );
      return rows[0]!.n > 0 && (await unackedCount(queue)) === 0 ? true : undefined;
    });

    // The first delivery resolved to tenant `guest`.
    expect(offered[0]).toBe('guest');
    const rows = await setup.database.db.query<{ tenant_id: string | null }>(
      `SELECT tenant_id FROM ${INBOX_TABLE} WHERE message_id = $1`,
      [messageId],
    );
    await consumer.close();
    setup.attached = null;
    await inbox.close();
    // Its retry tier queues too (InboxQueue deletes the default tiers' only).
    await deleteWorkQueue(setup.broker.channel, { queue, retryTiersMs: consumer.names.retryTiersMs });
    // On main: [{ tenant_id: null }], the global scope (offered[1] is null).
    expect(rows).toEqual([{ tenant_id: 'guest' }]);
  });
});
