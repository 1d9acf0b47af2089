/**
 * Review 43 (tenant scopes), failing on main.
 *
 * What I did: an SQS queue several tenants send to, each with its own IAM principal. SQS lets any
 * sender set any message attribute (the README: the `x-ferry-tenant-id` attribute "is only as
 * trustworthy as the queue's senders"); the one thing about a message SQS itself vouches for is
 * its `SenderId` system attribute (the authenticated principal; ElasticMQ answers the sender's
 * address). So the consumer takes the tenant from it, with the `tenant` function the README
 * offers for this ("`(message) => string | null`: the function decides alone"):
 * `tenant: (m) => m.Attributes?.SenderId ?? null`, into an inbox that takes global messages too.
 *
 * What happened: the consumer receives with `MessageSystemAttributeNames: ['ApproximateReceiveCount',
 * 'MessageGroupId']` only, so `Attributes.SenderId` is never there: the function answers null for
 * every message and each one is accepted and committed in the GLOBAL scope (with the default
 * `global: 'reject'`, dead-lettered `inbox_invalid`), whoever sent it. Nothing warns; the
 * README does not say which system attributes the function sees.
 *
 * What should happen: the message the function is given carries the sender SQS authenticated, so
 * a tenant keyed on it is that sender's tenant (here ElasticMQ's SenderId, `127.0.0.1`).
 *
 * Fix direction: ask for `SenderId` (and `SentTimestamp`) too in the ReceiveMessage call
 * (consumer.ts), or let the consumer options name the system attributes the identity / tenant
 * functions need; at the least document which `Attributes` those functions can read.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, type SqsConnection } from '@ferry/sqs';
import type { Message } from '@aws-sdk/client-sqs';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { TestQueues, openConnection, sendRaw, uniqueName, waitFor } from './support/sqs';

describe('review43: a tenant function keyed on the sender SQS authenticated', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  it('sees the message SenderId, and the message is accepted under that tenant, not in the global scope', async () => {
    const inbox = new Inbox(database.prisma, { global: 'shared' });
    await inbox.initialize();
    const { queueUrl } = await queues.declare({ name: uniqueName('r43-sender') });
    const seen: Array<string | undefined> = [];
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(inbox, {
      connection,
      queueUrl,
      consumer: 'billing',
      waitTimeSeconds: 1,
      observer: (event) => events.push(event),
      tenant: (message: Message) => {
        seen.push(message.Attributes?.SenderId);
        return message.Attributes?.SenderId ?? null;
      },
    });
    const messageId = uniqueName('m');
    try {
      await consumer.ready();
      await sendRaw(connection, queueUrl, '{"total":42}', { 'x-ferry-message-id': messageId });
      await waitFor('the message settled', () =>
        events.some((e) => e.type === 'settled') ? true : undefined,
      );
    } finally {
      await consumer.close();
      await inbox.close();
    }
    const rows = await database.db.query<{ tenant_id: string | null }>(
      `SELECT tenant_id FROM ${INBOX_TABLE} WHERE message_id = $1`,
      [messageId],
    );
    // On main: seen is [undefined] and the receipt is global ({ tenant_id: null }).
    expect({ seen, rows }).toEqual({ seen: ['127.0.0.1'], rows: [{ tenant_id: '127.0.0.1' }] });
  });
});
