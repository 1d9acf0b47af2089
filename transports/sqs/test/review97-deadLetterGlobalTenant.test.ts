/**
 * Review finding (failed first), review 97. A tenant function that answers null (the global
 * scope) decided the message has no tenant, but its dead-letter copy kept the message's own
 * `x-ferry-tenant-id` attribute (core deadLetterTenant answered "copy the attribute as it came").
 * What should happen: the copy carries the tenant the consumer decided: none.
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { attachSqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { receiveAtLeast, sendRaw, uniqueName } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('review97: the dead-letter copy of a message a tenant function put in the global scope', () => {
  const f = useSqsConsumerFixture();

  it('carries no tenant attribute, whatever the message carried', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('r97-global') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('r97-global-dead') });
    const forged = { [FERRY_HEADERS.tenantId]: 'globex' };
    await sendRaw(f.connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'g-1', ...forged });
    await sendRaw(f.connection, queueUrl, JSON.stringify({ a: 'x'.repeat(5_000) }), {
      [FERRY_HEADERS.messageId]: 'g-2',
      ...forged,
    });
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      tenant: () => null,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(consumer);
    await consumer.ready();
    const dead: Message[] = await receiveAtLeast(f.connection, deadUrl, 2);
    const seen = dead.map((m) => [
      String(m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue),
      Object.hasOwn(m.MessageAttributes ?? {}, FERRY_HEADERS.tenantId),
      String(m.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue),
    ]);
    expect(seen.sort()).toEqual([
      ['g-1', false, 'unparseable_body'],
      ['g-2', false, 'payload_too_large'],
    ]);
  });
});
