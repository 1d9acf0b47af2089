/**
 * The inbox's admission limit (maxPendingMessages) against the real inbox and ElasticMQ
 * (issue 12): a batch refused at the limit deletes its duplicate at once and holds only the new
 * messages, which are accepted exactly once when the backlog drains; nothing is dead-lettered.
 * A held batch whose SQS stops answering (a TCP blackhole: bytes dropped, no FIN, no RST) still
 * lets close() return, bounded by the visibility timeout, and loses nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsConnection, SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  SQS_ENDPOINT,
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  proxiedConnection as proxiedThrough,
  receiveNone,
  storedIds as storedIdsOf,
  uniqueName,
  waitFor,
} from './support/sqs';

describe('SQS consumer at the inbox admission limit', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;
  let proxy: TcpProxy;

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = openConnection();
    queues = new TestQueues(connection);
    const endpoint = new URL(SQS_ENDPOINT);
    proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  });

  afterAll(async () => {
    await proxy.close();
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  const storedIds = (consumer = 'billing') => storedIdsOf(database.db, consumer);

  /** Every receipt finished: the backlog that counts toward maxPendingMessages drains. */
  async function finishBacklog(): Promise<void> {
    await database.db.query(`UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now()`);
  }

  const proxiedConnection = () => proxiedThrough(proxy);

  /** With maxPendingMessages 1: one message accepted, then `count` new ones held at the limit. */
  async function holdAtLimit(queueUrl: string, events: readonly TransportConsumerEvent[], count: number) {
    const publisher = new SqsPublisher(connection);
    const backlog = outboxMessages(1, queueUrl);
    await publisher.publish(backlog, neverAborted());
    await waitFor('the backlog accepted (the limit reached)', () =>
      events.some((e) => e.type === 'accepted') ? true : undefined,
    );
    const fresh = outboxMessages(count, queueUrl);
    await publisher.publish(fresh, neverAborted());
    await waitFor('the new messages held at the limit', () =>
      events.some((e) => e.type === 'acceptance-unavailable') ? true : undefined,
    );
    return { backlog, fresh };
  }

  it('deletes the duplicate of a refused batch at once and accepts the refused messages once the backlog drains', async () => {
    const inbox = new Inbox(database.prisma, { maxPendingMessages: 2 });
    await inbox.initialize();
    // The backlog comes through one queue, the mixed batch through another: a receive still in
    // flight when the first consumer closes cannot take the mixed batch.
    const { queueUrl: backlogUrl } = await queues.declare({ name: uniqueName('backlog') });
    const { queueUrl } = await queues.declare({ name: uniqueName('admission') });
    const publisher = new SqsPublisher(connection);
    const events: TransportConsumerEvent[] = [];
    const settled = () => events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0);
    const attach = (url: string) =>
      attachSqsConsumer(inbox, {
        connection,
        queueUrl: url,
        consumer: 'billing',
        waitTimeSeconds: 1,
        retryBackoff: { initialMs: 50, maxMs: 100 },
        observer: (event) => events.push(event),
      });
    const backlog = outboxMessages(2, backlogUrl);
    const first = attach(backlogUrl);
    try {
      await first.ready();
      await publisher.publish(backlog, neverAborted());
      await waitFor('the backlog deleted (the limit reached)', () => (settled() >= 2 ? true : undefined));
    } finally {
      await first.close();
    }

    // Sent while no consumer runs, so that one receive takes the duplicate with the new ones.
    const fresh = outboxMessages(2, queueUrl);
    const duplicate = { ...backlog[0]!, destination: queueUrl };
    const outcomes = await publisher.publish([duplicate, ...fresh], neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent']);
    const consumer = attach(queueUrl);
    try {
      await consumer.ready();
      await waitFor('the duplicate deleted while the new messages are refused', () =>
        settled() >= 3 && events.some((e) => e.type === 'acceptance-unavailable') ? true : undefined,
      );
      expect(await storedIds()).toEqual(backlog.map((m) => m.id).sort());

      // The backlog drains: the worker would finish these receipts.
      await database.db.query(
        `UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now() WHERE consumer = 'billing'`,
      );
      await waitFor('every message deleted', () => (settled() >= 5 ? true : undefined));
      expect(await storedIds()).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
    } finally {
      await consumer.close();
    }
    expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
  });

  it('close() returns while a held batch cannot reach SQS, and the held messages come back', async () => {
    const inbox = new Inbox(database.prisma, { maxPendingMessages: 1 });
    await inbox.initialize();
    // The backlog is the whole inbox's: what an earlier case left is finished first.
    await finishBacklog();
    const { queueUrl } = await queues.declare({ name: uniqueName('hold-blackhole') });
    const proxied = proxiedConnection();
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(inbox, {
      connection: proxied,
      queueUrl: proxy.urlFor(queueUrl),
      consumer: 'shipping',
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 2,
      extendEveryMs: 100,
      retryBackoff: { initialMs: 50, maxMs: 100 },
      observer: (event) => events.push(event),
    });
    let closed = false;
    try {
      await consumer.ready();
      const { backlog, fresh } = await holdAtLimit(queueUrl, events, 2);

      await proxy.setMode('blackhole');
      // Renewals go into the blackhole, each unanswered.
      const renewedBefore = proxy.accepted;
      await waitFor('renewals sent into the blackhole', () =>
        proxy.accepted > renewedBefore ||
        events.filter((e) => e.type === 'acceptance-unavailable').length > 10
          ? true
          : undefined,
      );
      void consumer.close().then(() => {
        closed = true;
      });
      await waitFor(
        'close() returned although SQS does not answer',
        () => (closed ? true : undefined),
        15_000,
      );
      expect(await storedIds('shipping')).toEqual(backlog.map((m) => m.id));

      await proxy.setMode('pass');
      await finishBacklog();
      const next = attachSqsConsumer(inbox, {
        connection,
        queueUrl,
        consumer: 'shipping',
        waitTimeSeconds: 1,
        retryBackoff: { initialMs: 50, maxMs: 100 },
      });
      try {
        await waitFor('the held messages accepted after the blackhole', async () =>
          (await storedIds('shipping')).length === 3 ? true : undefined,
        );
      } finally {
        await next.close();
      }
      expect(await storedIds('shipping')).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
      expect(await receiveNone(connection, queueUrl)).toEqual([]);
    } finally {
      await proxy.setMode('pass');
      if (!closed) await consumer.close();
      await proxied.close();
    }
  });
  it('a held message whose visibility lapses is taken by a second consumer and accepted once', async () => {
    const inbox = new Inbox(database.prisma, { maxPendingMessages: 1 });
    await finishBacklog();
    const { queueUrl } = await queues.declare({ name: uniqueName('hold-lapse') });
    // The first consumer reaches SQS through the proxy, so its renewals can be made to fail.
    const proxied = proxiedConnection();
    const first: TransportConsumerEvent[] = [];
    const second: TransportConsumerEvent[] = [];
    const options = {
      consumer: 'returns',
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 1,
      extendEveryMs: 300,
      retryBackoff: { initialMs: 50, maxMs: 100 },
    };
    const a = attachSqsConsumer(inbox, {
      ...options,
      connection: proxied,
      queueUrl: proxy.urlFor(queueUrl),
      observer: (event) => first.push(event),
    });
    let b: ReturnType<typeof attachSqsConsumer> | undefined;
    try {
      await a.ready();
      const { backlog, fresh } = await holdAtLimit(queueUrl, first, 1);
      // Its renewals now go unanswered: the message becomes visible and the second consumer
      // holds it too.
      await proxy.setMode('blackhole');
      b = attachSqsConsumer(inbox, { ...options, connection, queueUrl, observer: (e) => second.push(e) });
      await waitFor('the lapsed message held by the second consumer as well', () =>
        second.some((e) => e.type === 'acceptance-unavailable') ? true : undefined,
      );
      await proxy.setMode('pass');
      await finishBacklog();
      await waitFor('both holds over', () =>
        [first, second].every((events) => events.some((e) => e.type === 'acceptance-recovered'))
          ? true
          : undefined,
      );
      expect(await storedIds('returns')).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
      const rows = await database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'returns'`,
      );
      expect(rows[0]?.n).toBe(2);
      await waitFor('the queue empty', async () =>
        (await receiveNone(connection, queueUrl)).length === 0 ? true : undefined,
      );
    } finally {
      await proxy.setMode('pass');
      await Promise.all([a.close(), b?.close()]);
      await proxied.close();
    }
  });
});
