/**
 * Review 90 (failed first): a consumer closed while it had lost its connection.
 *
 * What I did: @ferry/core/metrics fed by a consumer's emitter (consumerEmitter, the one way every
 * ferry consumer reports: RabbitMQ, Kafka on both clients, SQS), as a Kafka consumer reports: it
 * connected, reported its partitions' lag after a commit, then lost its connection (a broker
 * outage: `disconnected`, reason `lost`, a retry due), and the application closed it during the
 * outage (a shutdown, a redeploy, a consumer taken down because its broker is gone).
 * What happened: close() reported nothing, as the consumer was not connected; the last event the
 * observer had of it promised a retry that never came. So the metrics kept the consumer's lag
 * series for the life of the process (README: "a rebalance that takes it, or the consumer's
 * close(), removes it"): an alert on lag kept firing for a consumer this process no longer runs.
 * What should happen: close() of a consumer that connected once ends with one `disconnected` of
 * reason `closed` (`retryInMs` null) also after a lost connection, so every observer learns it
 * stopped for good, and the metrics drop its lag as for a consumer closed while connected.
 */
import { createFerryMetrics, type FerryMetrics } from '@ferry/core/metrics';
import { consumerEmitter, type TransportConsumerEvent } from '@ferry/core/transport';
import { combineObservers } from '@ferry/core';
import { parsePrometheusText } from '../../../test-support/prometheusText';

async function lagSeries(metrics: FerryMetrics): Promise<number> {
  const scraped = parsePrometheusText(await metrics.registry.metrics());
  return scraped.find('ferry_transport_consumer_lag', {}).length;
}

describe('a consumer closed while its connection was lost', () => {
  it('reports one disconnected (closed) and its lag series are removed', async () => {
    const metrics = createFerryMetrics();
    const events: TransportConsumerEvent[] = [];
    const emit = consumerEmitter(
      'kafka',
      'orders',
      combineObservers(metrics.transport, (event: TransportConsumerEvent) => {
        events.push(event);
      }),
    );
    emit({ type: 'connected', assignment: { orders: [0, 1] } });
    emit({ type: 'lag', group: 'billing', partition: 0, lag: 8 });
    emit({ type: 'lag', group: 'billing', partition: 1, lag: 0 });
    emit({ type: 'disconnected', error: 'broker unreachable', retryInMs: 1_000 });
    // A lost session keeps the consumer's lag: a stuck consumer stays visible while it retries.
    expect(await lagSeries(metrics)).toBe(2);

    emit.closed();
    emit.closed();

    expect(
      events
        .filter((event) => event.type === 'connected' || event.type === 'disconnected')
        .map((event) => (event.type === 'disconnected' ? `${event.type}:${event.reason}` : event.type)),
    ).toEqual(['connected', 'disconnected:lost', 'disconnected:closed']);
    expect(events.at(-1)).toMatchObject({ type: 'disconnected', reason: 'closed', retryInMs: null });
    expect(await lagSeries(metrics)).toBe(0);
  });

  it('a consumer that never connected reports nothing on close', () => {
    const events: TransportConsumerEvent[] = [];
    const emit = consumerEmitter('rabbitmq', 'orders', (event: TransportConsumerEvent) => {
      events.push(event);
    });
    emit({ type: 'disconnected', error: 'connect ECONNREFUSED', retryInMs: 100 });
    emit.closed();
    expect(events.map((event) => event.type)).toEqual(['disconnected']);
  });
});
