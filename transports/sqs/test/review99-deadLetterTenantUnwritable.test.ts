/**
 * Review finding (failed first), review 99. A tenant function decided a tenant SQS cannot carry
 * as an attribute value (here an attribute cut in the middle of a surrogate pair, which the inbox
 * refuses as invalid text). Its dead-letter copy could not carry that tenant, and kept the message's own
 * `x-ferry-tenant-id` instead (core withoutOverruledTenant removed it only for the global scope):
 * a drain with the default header source stored the copy under the tenant a producer forged,
 * which the consumer had overruled. What should happen: the copy never carries the tenant the
 * consumer overruled; it carries the decided tenant or none.
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS, type InboxAcceptor } from '@ferry/core';
import { attachSqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { receiveAtLeast, sendRaw, uniqueName } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('review99: the dead-letter copy of a message whose decided tenant SQS cannot carry', () => {
  const f = useSqsConsumerFixture();

  it('carries no tenant attribute, never the one the tenant function overruled', async () => {
    // As the inbox answers a tenant holding an unpaired surrogate (tenantIdFault: invalid_text).
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: (inputs) =>
        Promise.resolve(
          inputs.map(() => ({
            kind: 'invalid' as const,
            code: 'FERRY_VALIDATION_ERROR',
            reason: 'tenantId contains an unpaired UTF-16 surrogate',
            rejectReason: 'invalid_text' as const,
          })),
        ),
    };
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('r99-tenant') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('r99-tenant-dead') });
    // The application's tenant attribute cut to 5 UTF-16 units: half of the emoji's surrogate pair.
    await sendRaw(f.connection, queueUrl, '{"n":1}', {
      'x-app-tenant': 'acme\u{1F600}',
      [FERRY_HEADERS.messageId]: 'u-1',
      [FERRY_HEADERS.tenantId]: 'globex',
    });
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      tenant: (message) => String(message.MessageAttributes?.['x-app-tenant']?.StringValue).slice(0, 5),
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(consumer);
    await consumer.ready();
    const [dead]: Message[] = await receiveAtLeast(f.connection, deadUrl, 1);
    expect(dead!.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).toBe('u-1');
    expect(dead!.MessageAttributes?.[FERRY_HEADERS.tenantId]?.StringValue).toBeUndefined();
  });
});
