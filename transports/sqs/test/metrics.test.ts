/**
 * @ferry/core/metrics fed by real SQS consumers (observer: metrics.transport) against ElasticMQ:
 * the connected gauge counts each consumer of the queue while it polls, and none once closed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFerryMetrics } from '@ferry/core/metrics';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { attachSqsConsumer, type SqsConnection } from '@ferry/sqs';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { TestQueues, openConnection, uniqueName } from './support/sqs';

describe('transport metrics from SQS', () => {
  let connection: SqsConnection;
  let queues: TestQueues;

  beforeAll(() => {
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
  });

  it('counts each consumer of the queue while it is connected, and none once closed', async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('metrics') });
    const metrics = createFerryMetrics();
    const connected = async () =>
      parsePrometheusText(await metrics.registry.metrics()).value('ferry_transport_connected', {
        transport: 'sqs',
        source: queueUrl,
      });
    const attach = () =>
      attachSqsConsumer(new MemoryAcceptor(), {
        connection,
        queueUrl,
        consumer: 'metrics',
        waitTimeSeconds: 1,
        observer: metrics.transport,
      });
    const first = attach();
    const second = attach();
    try {
      await Promise.all([first.ready(), second.ready()]);
      expect(await connected()).toBe(2);
      await first.close();
      expect(await connected()).toBe(1);
      await second.close();
      expect(await connected()).toBe(0);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
