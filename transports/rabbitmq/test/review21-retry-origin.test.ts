/**
 * Review finding (failed first), review 21 of e4fb218: the retry-origin headers
 * (`x-ferry-origin-exchange`, `x-ferry-origin-routing-key`) took room in the retry copy's header
 * table, and a copy that had to leave a header out changed what a `tenant` function read. (The
 * review's other finding, a producer forging a retry return through the default exchange, is a
 * permission boundary: see the README's "Transport attempt counter".)
 */
import { FerryError, type InboxAcceptInput } from '@ferry/core';
import type { Message } from 'amqplib';
import { tableBytes } from '../src/headerTable';
import { uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review21: what a tenant function reads after a retry trip', () => {
  const f = useConsumerFixture(() => ({ prefetch: 10 }));
  const exchange = uniqueName('r21_orders');

  afterAll(async () => {
    await f.broker.channel.deleteExchange(exchange).catch(() => undefined);
  });

  // What a user does: reads the tenant from a table header the producer sets
  // (`x-claims: { tenant: 'acme', token: <signed claims> }`), as the README allows ("it may read
  // the header, the routing key, …"); the header is a table, so the inbox does not store it and
  // its size does not count against the inbox's header limits. The first acceptance fails with a
  // retriable error (FERRY_DATABASE_ERROR) and the delivery goes round a retry tier.
  // Contract (README): "A trip round the retry tiers keeps what these functions read."
  // What happens: the retry copy's header table, with ferry's attempt counter and the two origin
  // headers added, is over the 64 KiB amqplib can encode, so copyHeaders leaves out the largest
  // header, `x-claims`, the one the tenant function reads: after the trip the function finds no
  // claim and the message is accepted in the global scope (tenant null) instead of `acme`'s.
  it('never accepts a delivery without the header a tenant function reads after a failed acceptance', async () => {
    const offered: Array<{ messageId: string; tenantId: string | null }> = [];
    let calls = 0;
    await f.attach({
      maxTransportRetries: 3,
      bindings: [{ exchange, routingKey: '*.order.*' }],
      tenant: (message: Message) => {
        const claims = message.properties.headers?.['x-claims'] as { tenant?: unknown } | undefined;
        return typeof claims?.tenant === 'string' ? claims.tenant : null;
      },
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
    // A header table of 65,476 bytes (tableBytes), which amqplib still encodes on the producer's
    // side (64 KiB); ferry's attempt counter alone (33 bytes) still fit in the copy, the counter
    // and the origin headers (about 140 bytes) do not.
    const claims = { tenant: 'acme', token: '' };
    claims.token = 'x'.repeat(65_536 - 60 - tableBytes({ 'x-claims': claims }));
    expect(tableBytes({ 'x-claims': claims })).toBe(65_476);
    f.broker.channel.publish(exchange, 'acme.order.created', Buffer.from('{"total":42}'), {
      messageId,
      contentType: 'application/json',
      headers: { 'x-claims': claims },
    });

    // Never accepted without the header a function reads: such a delivery cannot go round the
    // retry tiers faithfully, so it is dead-lettered (headers_too_large, the failure in the
    // detail) after its first failed acceptance, never offered again under another tenant
    // (review 24: requeueing it instead never counted a trip and kept it for ever).
    const dead = await waitFor('the dead-letter copy', async () => {
      const copies = await f.broker.drain(`${f.queue}.dlq`);
      return copies.length > 0 ? copies : undefined;
    });
    expect(offered).toEqual([{ messageId, tenantId: 'acme' }]);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.properties.headers?.['x-ferry-reject-reason']).toBe('headers_too_large');
    expect(String(dead[0]!.properties.headers?.['x-ferry-reject-detail'])).toContain(
      'a retry copy cannot carry all of its headers',
    );
  });
});
