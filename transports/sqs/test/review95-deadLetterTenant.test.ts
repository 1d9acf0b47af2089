/**
 * Review finding (failed first), review 95. A dead-letter copy carries ferry's
 * `x-ferry-message-id` holding the identity the consumer used (core deadLetterIdentity), but not
 * the tenant it used: with `tenant: { fixed }` or a tenant function, a message without
 * `x-ferry-tenant-id` was copied without one, and one whose attribute named another tenant
 * (`tenant_mismatch`) was copied with that other tenant.
 * What the user sees: a ferry consumer draining the dead-letter queue (default `tenant: 'header'`)
 * stores the copies in the global scope, or in the scope of the tenant a producer forged.
 * What should happen: the copy carries the tenant ferry's tenant source gives the message (core
 * deadLetterTenant): the fixed tenant, or the tenant function's.
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { attachSqsConsumer, type ConsumerOptions } from '@ferry/sqs';
import pino from 'pino';
import { receiveAtLeast, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('review95: the tenant of a dead-letter copy', () => {
  const f = useSqsConsumerFixture();

  async function run(
    name: string,
    tenant: ConsumerOptions['tenant'],
    messages: readonly (readonly [string, Record<string, string>])[],
  ): Promise<string[][]> {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName(name) });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName(`${name}-dead`) });
    for (const [body, attributes] of messages) await sendRaw(f.connection, queueUrl, body, attributes);
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      tenant,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(consumer);
    await consumer.ready();
    const dead: Message[] = await receiveAtLeast(f.connection, deadUrl, 2);
    await waitFor('neighbours stored', async () =>
      (await acceptor.storedIds()).length === messages.length - 2 ? true : undefined,
    );
    const value = (m: Message, name: string) => String(m.MessageAttributes?.[name]?.StringValue);
    return dead
      .map((m) => [
        value(m, FERRY_HEADERS.messageId),
        value(m, FERRY_HEADERS.tenantId),
        value(m, FERRY_HEADERS.rejectReason),
      ])
      .sort();
  }

  it('carries the fixed tenant, also in place of a tenant attribute naming another', async () => {
    const dead = await run('r95-fixed', { fixed: 'acme' }, [
      ['not json', { [FERRY_HEADERS.messageId]: 'no-header' }],
      ['{"a":1}', { [FERRY_HEADERS.messageId]: 'forged', [FERRY_HEADERS.tenantId]: 'globex' }],
      ['{"a":1}', { [FERRY_HEADERS.messageId]: 'neighbour' }],
    ]);
    expect(dead).toEqual([
      ['forged', 'acme', 'tenant_mismatch'],
      ['no-header', 'acme', 'unparseable_body'],
    ]);
  });

  it("carries the tenant function's tenant", async () => {
    const dead = await run('r95-fn', (m) => `t-${String(m.MessageAttributes?.['org']?.StringValue)}`, [
      ['not json', { [FERRY_HEADERS.messageId]: 'fn-1', org: 'o1' }],
      [JSON.stringify({ a: 'x'.repeat(5_000) }), { [FERRY_HEADERS.messageId]: 'fn-2', org: 'o2' }],
    ]);
    expect(dead).toEqual([
      ['fn-1', 't-o1', 'unparseable_body'],
      ['fn-2', 't-o2', 'payload_too_large'],
    ]);
  });
});
