/**
 * The functions an application hands the SQS consumer (identity, tenant) may throw anything or
 * answer the wrong type: each costs the one message concerned a dead letter with its reason,
 * never the batch (left invisible until its visibility timeout) or the process.
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import { REJECT_DETAIL_ATTRIBUTE, attachSqsConsumer, resolveConsumerOptions } from '@ferry/sqs';
import { receiveAtLeast, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { HOSTILE_ANSWERS, hostileProxy } from '../../../test-support/hostileAnswers';

const BEHAVIOUR = HOSTILE_ANSWERS;

const attribute = (message: Message, name: string): string | undefined =>
  message.MessageAttributes?.[name]?.StringValue;

describe('SQS consumer with hostile application functions', () => {
  const f = useSqsConsumerFixture();

  it('dead-letters a message whose identity or tenant function throws or answers the wrong type, and stores its neighbours', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('callbacks') });
    const { queueUrl: deadUrl } = await f.queues.declare({ name: uniqueName('callbacks-dead') });
    const kinds = Object.keys(BEHAVIOUR);
    await sendRaw(f.connection, queueUrl, '{"n":1}', { 'x-kind': 'good', 'x-app-id': 'good-1' });
    for (const kind of kinds) await sendRaw(f.connection, queueUrl, '{"n":2}', { 'x-kind': kind });
    // The tenant function meets these: each has an identity.
    await sendRaw(f.connection, queueUrl, '{"n":3}', { 'x-kind': 'tenant-proxy', 'x-app-id': 'tp-1' });
    await sendRaw(f.connection, queueUrl, '{"n":4}', { 'x-kind': 'good', 'x-app-id': 'good-2' });
    const kindOf = (message: Message) => attribute(message, 'x-kind') ?? '';
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      identity: (message) => attribute(message, 'x-app-id') ?? (BEHAVIOUR[kindOf(message)]!() as string),
      tenant: (message) => {
        if (kindOf(message) === 'tenant-proxy') throw hostileProxy();
        return 'acme';
      },
    });
    f.consumers.push(consumer);
    await consumer.ready();

    const dead = await receiveAtLeast(f.connection, deadUrl, kinds.length + 1);
    const reasons = Object.fromEntries(
      dead.map((m) => [kindOf(m), attribute(m, FERRY_HEADERS.rejectReason)]),
    );
    expect(reasons).toEqual({
      ...Object.fromEntries(kinds.map((kind) => [kind, 'missing_identity'])),
      'tenant-proxy': 'tenant_unresolved',
    });
    const thrown = dead.find((m) => kindOf(m) === 'throws-error');
    expect(attribute(thrown!, REJECT_DETAIL_ATTRIBUTE)).toContain('extractor bug');
    await waitFor('two stored', async () => ((await acceptor.storedIds()).length >= 2 ? true : undefined));
    expect((await acceptor.storedIds()).sort()).toEqual(['good-1', 'good-2']);
  });

  it.each([
    ['identity', 'MessageId'],
    ['random', 0.5],
  ])('refuses a %s that is not a function when the consumer attaches', (option, value) => {
    const options = { queueUrl: 'http://q', consumer: 'c', [option]: value };
    const attempt = () =>
      resolveConsumerOptions(options as unknown as Parameters<typeof resolveConsumerOptions>[0]);
    expect(attempt).toThrow(FerryConfigError);
    expect(attempt).toThrow(expect.objectContaining({ option }));
  });
});
