/**
 * Where the tenant of an inbound record comes from (option `tenant`): ferry's header by default,
 * a tenant fixed per consumer, or a function of the record. A record whose tenant cannot be
 * trusted is dead-lettered with its reason and committed.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { REJECT_REASONS } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { readBack } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

const headers = (messageId: string, tenant?: string) => ({
  [FERRY_HEADERS.messageId]: messageId,
  ...(tenant === undefined ? {} : { [FERRY_HEADERS.tenantId]: tenant }),
});

async function tenantsOf(consumer: string): Promise<(readonly [string, string | null])[]> {
  return (await harness.acceptor.rows(consumer)).map((row) => [row.messageId, row.tenantId] as const);
}

describe('attachKafkaConsumer tenant option', () => {
  test('by default the tenant comes from the x-ferry-tenant-id header', async () => {
    const topic = await harness.topicPair('tenant-header');
    await harness.raw.send({
      topic,
      messages: [
        { value: '{}', headers: headers('a', 'acme') },
        { value: '{}', headers: headers('b') },
      ],
    });
    const { groupId } = await harness.start(topic, 'tenant-header');

    await harness.waitFullyCommitted(groupId, topic);
    expect(await tenantsOf('tenant-header')).toEqual([
      ['a', 'acme'],
      ['b', null],
    ]);
  });

  test('a fixed tenant applies to every record; a record whose tenant header names another tenant is dead-lettered as tenant_mismatch', async () => {
    const topic = await harness.topicPair('tenant-fixed');
    await harness.raw.send({
      topic,
      messages: [
        { value: '{}', headers: headers('no-header') },
        { value: '{}', headers: headers('same', 'acme') },
        { value: '{}', headers: headers('forged', 'globex') },
        { value: '{}', headers: headers('after') },
      ],
    });
    const { groupId } = await harness.start(topic, 'tenant-fixed', { tenant: { fixed: 'acme' } });

    await harness.waitFullyCommitted(groupId, topic);
    expect(await tenantsOf('tenant-fixed')).toEqual([
      ['no-header', 'acme'],
      ['same', 'acme'],
      ['after', 'acme'],
    ]);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect([dead!.headers[FERRY_HEADERS.messageId], dead!.headers[FERRY_HEADERS.rejectReason]]).toEqual([
      'forged',
      REJECT_REASONS.tenantMismatch,
    ]);
  });

  test('a tenant function decides alone (the header is ignored); one that throws dead-letters the record as tenant_unresolved', async () => {
    const topic = await harness.topicPair('tenant-function');
    await harness.raw.send({
      topic,
      messages: [
        { key: 'org-1', value: '{}', headers: headers('keyed', 'globex') },
        { key: 'boom', value: '{}', headers: headers('throws') },
        { key: null, value: '{}', headers: headers('global') },
      ],
    });
    const { groupId } = await harness.start(topic, 'tenant-function', {
      tenant: (record) => {
        if (record.key === 'boom') throw new Error('no tenant for boom');
        return record.key;
      },
    });

    await harness.waitFullyCommitted(groupId, topic);
    expect(await tenantsOf('tenant-function')).toEqual([
      ['keyed', 'org-1'],
      ['global', null],
    ]);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.tenantUnresolved);
    expect(dead!.headers['x-ferry-reject-detail']).toContain('no tenant for boom');
  });
});
