/**
 * Review finding (failed first), review 95. A dead-letter copy carries ferry's
 * `x-ferry-message-id` holding the identity the consumer used (core deadLetterIdentity), but not
 * the tenant it used: with `tenant: { fixed }` or a tenant function, a delivery without
 * `x-ferry-tenant-id` was copied without one, and one whose header named another tenant
 * (`tenant_mismatch`) was copied with that other tenant.
 * What the user sees: a ferry consumer draining the dead-letter queue (default `tenant: 'header'`)
 * stores the copies in the global scope, or in the scope of the tenant a producer forged.
 * What should happen: the copy carries the tenant ferry's tenant source gives the delivery (core
 * deadLetterTenant): the fixed tenant, or the tenant function's.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review95: the tenant of a dead-letter copy', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));

  const send = (body: string, headers: Record<string, unknown>) =>
    f.broker.channel.sendToQueue(f.queue, Buffer.from(body), { contentType: 'application/json', headers });

  async function deadLetters(count: number): Promise<GetMessage[]> {
    const dead: GetMessage[] = [];
    await waitFor(`${count} dead letters, nothing unacked`, async () => {
      dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      return dead.length >= count && (await unackedCount(f.queue)) === 0 ? true : undefined;
    });
    return dead;
  }

  const tenantOf = (m: GetMessage) => [
    String(m.properties.headers?.[FERRY_HEADERS.messageId]),
    String(m.properties.headers?.[FERRY_HEADERS.tenantId]),
    String(m.properties.headers?.[FERRY_HEADERS.rejectReason]),
  ];

  it('carries the fixed tenant, also in place of a tenant header naming another', async () => {
    await f.attach({ tenant: { fixed: 'acme' } });
    send('not json', { [FERRY_HEADERS.messageId]: 'no-header' });
    send('{"a":1}', { [FERRY_HEADERS.messageId]: 'forged', [FERRY_HEADERS.tenantId]: 'globex' });
    send('{"a":1}', { [FERRY_HEADERS.messageId]: 'neighbour' });
    const dead = await deadLetters(2);
    expect(dead.map(tenantOf).sort()).toEqual([
      ['forged', 'acme', 'tenant_mismatch'],
      ['no-header', 'acme', 'unparseable_body'],
    ]);
    await f.expectStoredOnce(['neighbour']);
  });

  it("carries the tenant function's tenant", async () => {
    await f.attach({ tenant: (m) => `t-${m.fields.routingKey}` });
    send('not json', { [FERRY_HEADERS.messageId]: 'fn-1' });
    send(JSON.stringify({ a: 'x'.repeat(5_000) }), { [FERRY_HEADERS.messageId]: 'fn-2' });
    const dead = await deadLetters(2);
    expect(dead.map(tenantOf).sort()).toEqual([
      ['fn-1', `t-${f.queue}`, 'unparseable_body'],
      ['fn-2', `t-${f.queue}`, 'payload_too_large'],
    ]);
  });
});
