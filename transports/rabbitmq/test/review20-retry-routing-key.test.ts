/**
 * Review finding (failed first), review 20 of 1524e25: what a trip round the retry tiers does to
 * a delivery a `tenant` or `identity` function reads, and to its dead-letter copy.
 */
import { FerryError, type InboxAcceptInput } from '@ferry/core';
import type { Message } from 'amqplib';
import { uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review20: a tenant read from the routing key, across a retry trip', () => {
  const f = useConsumerFixture(() => ({ prefetch: 10 }));
  const exchange = uniqueName('r20_orders');

  afterAll(async () => {
    await f.broker.channel.deleteExchange(exchange).catch(() => undefined);
  });

  // What a user does: binds the work queue to a topic exchange whose routing keys start with the
  // tenant (`acme.order.created`) and passes `tenant: (m) => m.fields.routingKey.split('.')[0]`,
  // as the README allows ("`(message) => string | null`: the function decides alone (it may read
  // the header, the routing key, …)"). The first acceptance fails with a retriable error that is
  // not an outage (FERRY_DATABASE_ERROR), so the delivery goes round a retry tier queue, which the
  // README describes as the same message coming back to the work queue.
  // Contract: the message is accepted once, under tenant `acme` (the tenant it was published
  // for); a retry trip must not change the scope a message is accepted in.
  // What happens: the retry copy is published through the default exchange to the tier queue and
  // dead-lettered back with `x-dead-letter-routing-key` = the work queue, so the delivery that
  // comes back has the work queue's name as routing key: the tenant function answers that name
  // and the message is accepted under a tenant that does not exist (another tenant's scope if
  // the names collide), the original routing key being carried nowhere on the copy.
  it('accepts a message under the tenant its routing key names after a trip round the retry tiers', async () => {
    const offered: Array<{ messageId: string; tenantId: string | null }> = [];
    let calls = 0;
    await f.attach({
      maxTransportRetries: 3,
      bindings: [{ exchange, routingKey: '*.order.*' }],
      tenant: (message: Message) => message.fields.routingKey.split('.')[0] ?? null,
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: (inputs: readonly InboxAcceptInput[]) => {
          calls += 1;
          for (const input of inputs) offered.push({ messageId: input.messageId, tenantId: input.tenantId });
          if (calls === 1)
            return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'));
          return Promise.resolve(inputs.map((input) => ({ kind: 'accepted' as const, id: input.messageId })));
        },
      },
    });
    const messageId = uniqueName('m');
    f.broker.channel.publish(exchange, 'acme.order.created', Buffer.from('{"total":42}'), {
      messageId,
      contentType: 'application/json',
    });

    await waitFor('offered twice (first attempt, then after the retry trip)', () =>
      offered.length >= 2 ? true : undefined,
    );

    expect(offered[0]).toEqual({ messageId, tenantId: 'acme' });
    // Fails on HEAD: tenantId is the work queue's name (e.g. "ferry_t_work_1a2b3c4d").
    expect(offered[1]).toEqual({ messageId, tenantId: 'acme' });
  });

  // The same trips, until the retries run out: an `identity` function reading the routing key
  // must name the same message on every trip (else each retry is a new message to the inbox), and
  // the dead-letter copy goes out with the routing key the message was published with, not the
  // work queue's name the last trip gave it (a dead-letter queue bound by that key missed it).
  it('keeps the routing key for an identity function on every trip and for the dead-letter copy', async () => {
    const seen: string[] = [];
    const consumer = await f.attach({
      maxTransportRetries: 2,
      bindings: [{ exchange, routingKey: '*.order.*' }],
      identity: (message: Message) => `${message.fields.exchange}|${message.fields.routingKey}`,
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: (inputs: readonly InboxAcceptInput[]) => {
          seen.push(...inputs.map((input) => input.messageId));
          return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'));
        },
      },
    });
    f.broker.channel.publish(exchange, 'acme.order.paid', Buffer.from('{"total":7}'), {
      contentType: 'application/json',
    });

    const dead = await waitFor('the dead-letter copy', async () => {
      const copies = await f.broker.drain(consumer.names.deadLetterQueue);
      return copies.length > 0 ? copies : undefined;
    });
    expect(seen).toEqual([
      `${exchange}|acme.order.paid`,
      `${exchange}|acme.order.paid`,
      `${exchange}|acme.order.paid`,
    ]);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.fields.routingKey).toBe('acme.order.paid');
    expect(dead[0]!.properties.headers?.['x-ferry-reject-reason']).toBe('transport_retries_exhausted');
  });
});
