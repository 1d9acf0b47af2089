/**
 * Review finding (failed first), review 97. A tenant function that answers null (the global
 * scope) decided the delivery has no tenant, but its dead-letter copy kept the delivery's own
 * `x-ferry-tenant-id`: core deadLetterTenant answered "copy the header as it came" for a global
 * scope as for a header source.
 * What the user sees: a ferry consumer draining the dead-letter queue (default `tenant: 'header'`)
 * stores the copy in the scope of whatever tenant a producer wrote, one the consumer refused to use.
 * What should happen: the copy carries the tenant the consumer decided: none.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review97: the dead-letter copy of a delivery a tenant function put in the global scope', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));

  const send = (body: string, headers: Record<string, unknown>) =>
    f.broker.channel.sendToQueue(f.queue, Buffer.from(body), { contentType: 'application/json', headers });

  it('carries no tenant header, whatever the delivery carried', async () => {
    await f.attach({ tenant: () => null });
    send('not json', { [FERRY_HEADERS.messageId]: 'g-1', [FERRY_HEADERS.tenantId]: 'globex' });
    send(JSON.stringify({ a: 'x'.repeat(5_000) }), {
      [FERRY_HEADERS.messageId]: 'g-2',
      [FERRY_HEADERS.tenantId]: 'globex',
    });
    send('{"a":1}', { [FERRY_HEADERS.messageId]: 'neighbour', [FERRY_HEADERS.tenantId]: 'globex' });
    const dead: GetMessage[] = [];
    await waitFor('2 dead letters, nothing unacked', async () => {
      dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      return dead.length >= 2 && (await unackedCount(f.queue)) === 0 ? true : undefined;
    });
    const seen = dead.map((m) => [
      String(m.properties.headers?.[FERRY_HEADERS.messageId]),
      Object.hasOwn(m.properties.headers ?? {}, FERRY_HEADERS.tenantId),
      String(m.properties.headers?.[FERRY_HEADERS.rejectReason]),
    ]);
    expect(seen.sort()).toEqual([
      ['g-1', false, 'unparseable_body'],
      ['g-2', false, 'payload_too_large'],
    ]);
    await f.expectStoredOnce(['neighbour']);
  });
});
