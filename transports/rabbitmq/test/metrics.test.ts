/**
 * @ferry/core/metrics fed by a real RabbitMQ consumer and publisher (observer: metrics.transport),
 * scraped over HTTP: deliveries received, accepted, settled and dead-lettered by reason, messages
 * published, the connected consumers and their reconnects, per queue; no message id in a label.
 */
import { createFerryMetrics, serveMetrics, type FerryMetrics, type MetricsServer } from '@ferry/core/metrics';
import { scrape, type Scrape } from '../../../test-support/prometheusText';
import { closeConnectionsNamed, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessages } from './support/messages';

describe('transport metrics from RabbitMQ', () => {
  let metrics: FerryMetrics;
  let server: MetricsServer;
  // The fixture's publisher is made before this file's beforeEach: forward to the test's metrics.
  const observer: FerryMetrics['transport'] = (event) => metrics.transport(event);
  const f = useConsumerFixture(
    () => ({ observer }),
    () => ({ observer }),
  );
  beforeEach(async () => {
    metrics = createFerryMetrics();
    server = await serveMetrics({ registry: metrics.registry, port: 0 });
  });
  afterEach(async () => {
    await server.close();
  });

  const labels = () => ({ transport: 'rabbitmq', source: f.queue });
  /** Scrapes until `ready` holds for the scrape (the consumer settles asynchronously). */
  const scrapeUntil = (what: string, ready: (s: Scrape) => boolean) =>
    waitFor(what, async () => {
      const s = await scrape(server.url);
      return ready(s) ? s : undefined;
    });

  it('counts published, received, accepted, settled and dead-lettered deliveries of the queue', async () => {
    await f.attach();
    const messages = outboxMessages(5, { destination: `/${f.queue}` });
    await f.publisher.publish(messages, neverAborted());
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{not json'), {
      messageId: 'poison-1',
      contentType: 'application/json',
    });

    const s = await scrapeUntil(
      'six deliveries settled',
      (scraped) => scraped.value('ferry_transport_settled_total', labels()) === 6,
    );
    expect(s.value('ferry_transport_published_total', { transport: 'rabbitmq', destination: f.queue })).toBe(
      5,
    );
    expect(
      s.value('ferry_transport_publish_duration_seconds_count', {
        transport: 'rabbitmq',
        destination: f.queue,
      }),
    ).toBe(1);
    expect(s.value('ferry_transport_received_total', labels())).toBe(6);
    expect(s.value('ferry_transport_accepted_total', labels())).toBe(5);
    expect(s.value('ferry_transport_dead_lettered_total', { ...labels(), reason: 'unparseable_body' })).toBe(
      1,
    );
    expect(s.value('ferry_transport_connected', labels())).toBe(1);
    expect(s.find('ferry_transport_reconnects_total')).toEqual([]);
    const ids = new Set(['poison-1', ...messages.map((m) => m.id)]);
    expect(s.samples.flatMap((sample) => Object.values(sample.labels)).filter((v) => ids.has(v))).toEqual([]);
  });

  it('counts a reconnect after the broker closed the connection', async () => {
    await f.attach();
    expect(await closeConnectionsNamed(f.connectionName)).toBe(1);
    const s = await scrapeUntil(
      'the consumer connected again',
      (scraped) => scraped.value('ferry_transport_reconnects_total', labels()) === 1,
    );
    expect(s.value('ferry_transport_connected', labels())).toBe(1);
  });

  it('counts each consumer of the queue while it is connected, and none once closed', async () => {
    const first = await f.attach();
    const second = await f.attach();
    try {
      await scrapeUntil(
        'two consumers connected',
        (s) => s.value('ferry_transport_connected', labels()) === 2,
      );
      await first.close();
      expect((await scrape(server.url)).value('ferry_transport_connected', labels())).toBe(1);
      await second.close();
      const s = await scrape(server.url);
      expect(s.value('ferry_transport_connected', labels())).toBe(0);
      expect(s.find('ferry_transport_reconnects_total')).toEqual([]);
    } finally {
      await first.close();
    }
  });
});
