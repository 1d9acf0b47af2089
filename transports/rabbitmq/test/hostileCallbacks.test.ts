/**
 * The functions an application hands the RabbitMQ consumer (identity, tenant, random) may throw
 * anything, return the wrong type or a Promise: each costs the one delivery concerned a dead
 * letter with its reason, never the batch, the channel or the process.
 */
import { FERRY_HEADERS, FerryConfigError, INBOX_TABLE, Inbox } from '@ferry/core';
import type { GetMessage, Message } from 'amqplib';
import {
  attachRabbitConsumer,
  declareWorkQueue,
  resolveConsumerOptions,
  type RabbitConsumerOptions,
} from '@ferry/rabbitmq';
import { InboxQueue, unackedCount, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { HOSTILE_ANSWERS } from '../../../test-support/hostileAnswers';

const BEHAVIOUR = HOSTILE_ANSWERS;

function kindOf(message: Message | GetMessage | undefined): string {
  return String(message?.properties.headers?.['x-kind']);
}

describe('RabbitMQ consumer with hostile application functions', () => {
  const fixture = useConsumerFixture();

  function publish(kind: string, headers: Record<string, string> = {}, messageId?: string): void {
    fixture.broker.channel.sendToQueue(fixture.queue, Buffer.from(JSON.stringify({ kind })), {
      ...(messageId === undefined ? {} : { messageId }),
      contentType: 'application/json',
      headers: { 'x-kind': kind, ...headers },
    });
  }

  async function deadLetters(count: number): Promise<Map<string, GetMessage>> {
    const collected: GetMessage[] = [];
    return waitFor(`${count} dead letters`, async () => {
      collected.push(...(await fixture.broker.drain(`${fixture.queue}.dlq`)));
      if (collected.length < count) return undefined;
      return new Map(collected.map((m) => [kindOf(m), m]));
    });
  }

  it('dead-letters a delivery whose identity function throws or answers no string, and stores its neighbours', async () => {
    const kinds = Object.keys(BEHAVIOUR);
    // Queued before the consumer attaches, so the hostile ones share a batch with the good ones.
    await declareWorkQueue(fixture.broker.channel, { queue: fixture.queue, retryTiersMs: [100, 200] });
    publish('good', { 'x-app-id': 'good-1' });
    for (const kind of kinds) publish(kind);
    publish('good', { 'x-app-id': 'good-2' });
    await fixture.attach({
      identity: (message) => {
        const id = message.properties.headers?.['x-app-id'] as string | undefined;
        return id ?? (BEHAVIOUR[kindOf(message)]!() as string);
      },
    });

    const dead = await deadLetters(kinds.length);
    expect(
      [...dead].map(([kind, letter]) => [kind, letter.properties.headers?.[FERRY_HEADERS.rejectReason]]),
    ).toEqual(expect.arrayContaining(kinds.map((kind) => [kind, 'missing_identity'])));
    expect(String(dead.get('throws-error')?.properties.headers?.['x-ferry-reject-detail'])).toContain(
      'extractor bug',
    );
    await fixture.expectStoredOnce(['good-1', 'good-2']);
    await waitFor('nothing unacked', async () =>
      (await unackedCount(fixture.queue)) === 0 ? true : undefined,
    );
  });

  it('dead-letters a delivery whose tenant function throws a value that cannot be read', async () => {
    await fixture.attach({
      tenant: (message) => (BEHAVIOUR[kindOf(message)]?.() as string | undefined) ?? null,
    });
    publish('throws-proxy', {}, 'proxy-1');
    publish('promise', {}, 'promise-1');
    publish('good', {}, 'good-1');

    const dead = await deadLetters(2);
    expect(dead.get('throws-proxy')?.properties.headers?.[FERRY_HEADERS.rejectReason]).toBe(
      'tenant_unresolved',
    );
    expect(dead.get('promise')?.properties.headers?.[FERRY_HEADERS.rejectReason]).toBe('tenant_unresolved');
    await fixture.expectStoredOnce(['good-1']);
  });

  it.each([
    ['identity', 'messageId'],
    ['random', 0.5],
  ])('refuses a %s that is not a function when the consumer attaches', (option, value) => {
    const options = { connection: 'amqp://x', queue: 'q', consumer: 'c', [option]: value };
    const attempt = () => resolveConsumerOptions(options as unknown as RabbitConsumerOptions, 1_000);
    expect(attempt).toThrow(FerryConfigError);
    expect(attempt).toThrow(expect.objectContaining({ option }));
  });
});

describe('RabbitMQ consumer of the @ferry/core inbox with an identity function answering ids it cannot store', () => {
  const setup = new InboxQueue('callbacks-inbox');

  it('dead-letters a delivery whose identity is huge or holds NUL, and accepts its neighbours', async () => {
    const inbox = new Inbox(setup.database.prisma, { global: 'shared' });
    const run = uniqueName('cb');
    setup.attached = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue: setup.queue,
      consumer: 'billing',
      identity: (message) => {
        const kind = kindOf(message);
        if (kind === 'huge') return 'x'.repeat(1_000_000);
        if (kind === 'nul') return 'a\u0000b';
        return `${run}-${kind}`;
      },
    });
    await setup.attached.ready();
    for (const kind of ['good-1', 'huge', 'nul', 'good-2']) {
      setup.broker.channel.sendToQueue(setup.queue, Buffer.from('{}'), {
        contentType: 'application/json',
        headers: { 'x-kind': kind },
      });
    }

    const letters: GetMessage[] = [];
    await waitFor('every delivery settled', async () => {
      letters.push(...(await setup.broker.drain(`${setup.queue}.dlq`)));
      return letters.length >= 2 && (await unackedCount(setup.queue)) === 0 ? true : undefined;
    });
    expect(
      Object.fromEntries(letters.map((m) => [kindOf(m), m.properties.headers?.[FERRY_HEADERS.rejectReason]])),
    ).toEqual({
      huge: expect.any(String),
      nul: 'invalid_text',
    });
    const rows = await setup.database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} ORDER BY message_id`,
    );
    expect(rows.map((r) => r.message_id)).toEqual([`${run}-good-1`, `${run}-good-2`]);
  });
});
