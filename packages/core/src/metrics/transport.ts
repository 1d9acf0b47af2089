import type { Gauge } from 'prom-client';
import { capacity, closedSet, labelText, OVERFLOW_LABEL, type LabelBound } from '../observe/cardinality';
import type { Logger } from '../observe/logger';
import type { TransportEvent } from '../transport/events';
import type { MetricFactory } from './factory';
import { count, observeMs, usable } from './values';

/**
 * Every transport's consumer and publisher metrics, fed by their observer events. Labels: the
 * transport's name, the queue / topic it reads (`source`) or the exchange / topic / queue it
 * writes (`destination`, never a routing key), a reason, a Kafka partition number and consumer
 * group (a closed consumer's lag series are removed), each bounded by `bound` (an event's
 * destination can name a queue or topic per tenant); an outcome from its closed set. Never a
 * message id, never a consumer's `instance`. The state kept per partition and per consumer is
 * bounded by `maxLabelValues` too (review 127): a lag series sums at most that many partitions,
 * a source counts at most that many consumers; the first value refused is said on `logger`.
 */
export function transportMetrics(
  make: MetricFactory,
  bound: (labelName: string) => LabelBound,
  maxLabelValues: number,
  logger: () => Logger,
): (event: TransportEvent) => void {
  const [transportOf, sourceOf, destinationOf, reasonOf, groupOf, partitionOf] = [
    'transport',
    'source',
    'destination',
    'reason',
    'group',
    'partition',
  ].map(bound) as [LabelBound, LabelBound, LabelBound, LabelBound, LabelBound, LabelBound];
  const outcomeOf = closedSet(['retryable', 'permanent', 'unavailable']);
  const consumerLabels = ['transport', 'source'] as const;
  const publisherLabels = ['transport', 'destination'] as const;
  const received = make.counter(
    'transport_received_total',
    'Deliveries received from the broker',
    consumerLabels,
  );
  const accepted = make.counter(
    'transport_accepted_total',
    'Deliveries the inbox accepted (new or duplicate), then settled with the broker',
    consumerLabels,
  );
  const deadLettered = make.counter(
    'transport_dead_lettered_total',
    'Deliveries sent to the dead-letter destination before acceptance, by reason',
    [...consumerLabels, 'reason'],
  );
  const acceptanceFailures = make.counter(
    'transport_acceptance_failures_total',
    'Acceptance attempts of a batch that failed: failed (the deliveries come back), unavailable (the database cannot accept; the consumer holds the batch)',
    [...consumerLabels, 'kind'],
  );
  const settled = make.counter(
    'transport_settled_total',
    'Deliveries settled with the broker (acked, committed, deleted)',
    consumerLabels,
  );
  const connected = make.gauge(
    'transport_connected',
    'Consumers of the source connected and subscribed in this process (0 once each lost its connection or was closed)',
    consumerLabels,
  );
  const reconnects = make.counter(
    'transport_reconnects_total',
    'Times the consumer connected again after it had lost its connection (a Kafka rebalance is not one)',
    consumerLabels,
  );
  const errors = make.counter(
    'transport_consumer_errors_total',
    'Consumer errors that did not stop it',
    consumerLabels,
  );
  const lag = make.gauge(
    'transport_consumer_lag',
    "Records between the consumer group's committed offset and the newest record of a partition (Kafka), after the last commit of a consumer of this process that owns it",
    [...consumerLabels, 'group', 'partition'],
  );
  const published = make.counter(
    'transport_published_total',
    'Messages the broker confirmed',
    publisherLabels,
  );
  const publishFailures = make.counter(
    'transport_publish_failures_total',
    'Messages the broker did not confirm, by what the relay makes of them: retryable, permanent, unavailable',
    [...publisherLabels, 'outcome'],
  );
  const publishDuration = make.histogram(
    'transport_publish_duration_seconds',
    'Duration of confirmed publish calls (one per batch the relay hands the publisher)',
    publisherLabels,
  );
  const partitionLags = new PartitionLags(
    lag,
    capacity(maxLabelValues, () =>
      logger().warn(
        { maxLabelValues },
        'ferry metrics: a consumer lag series reached maxLabelValues partitions; the lag of a later partition of a full series is not counted (said once)',
      ),
    ),
  );
  const connections = new Connections(
    connected,
    reconnects,
    capacity(maxLabelValues, () =>
      logger().warn(
        { maxLabelValues },
        'ferry metrics: a source reached maxLabelValues consumers (instances) not closed; later consumers of a full source are not counted in transport_connected and transport_reconnects_total (said once)',
      ),
    ),
  );

  return (event) => {
    switch (event.type) {
      case 'published': {
        const labels = {
          transport: transportOf(event.transport),
          destination: destinationOf(event.destination),
        };
        published.inc(labels, count(event.count));
        observeMs(publishDuration, labels, event.durationMs);
        return;
      }
      case 'publish-failed':
        publishFailures.inc(
          {
            transport: transportOf(event.transport),
            destination: destinationOf(event.destination),
            outcome: outcomeOf(event.outcome),
          },
          count(event.count),
        );
        return;
      default:
        break;
    }
    const labels = { transport: transportOf(event.transport), source: sourceOf(event.source) };
    switch (event.type) {
      case 'received':
        received.inc(labels, count(event.count));
        return;
      case 'accepted':
        accepted.inc(labels, count(event.count));
        return;
      case 'dead-lettered':
        deadLettered.inc({ ...labels, reason: reasonOf(event.reason) });
        return;
      case 'acceptance-failed':
        acceptanceFailures.inc({ ...labels, kind: 'failed' });
        return;
      case 'acceptance-unavailable':
        acceptanceFailures.inc({ ...labels, kind: 'unavailable' });
        return;
      case 'settled':
        settled.inc(labels, count(event.count));
        return;
      case 'connected': {
        const instance = identity(event.instance);
        connections.up(labels, instance);
        if (event.assignment) partitionLags.keepAssigned(instance, event.assignment);
        return;
      }
      case 'disconnected': {
        const instance = identity(event.instance);
        const stopped = event.reason === 'closed' || event.retryInMs === null;
        connections.down(labels, instance, stopped);
        if (stopped) partitionLags.forget(instance);
        return;
      }
      case 'lag':
        partitionLags.set(
          identity(event.instance),
          {
            ...labels,
            // A group label from an event that lacks one (a third party's transport) is ''.
            group: groupOf(typeof event.group === 'string' ? event.group : ''),
            partition: partitionOf(event.partition),
          },
          {
            transport: identity(event.transport),
            group: identity(event.group),
            topic: identity(event.source),
            partition:
              typeof event.partition === 'number' ? event.partition : Number(identity(event.partition)),
          },
          event.lag,
        );
        return;
      case 'error':
        errors.inc(labels);
        return;
      default:
        return;
    }
  };
}

type SourceLabels = { transport: string; source: string };

/**
 * A partition's reported identity, or a consumer's `instance`, as text; one that has none
 * (labelText) is OVERFLOW_LABEL's. Every use of an `instance` goes through it (review 128: a lag
 * was kept under the text of a number or missing `instance` and forgotten by the raw value, so
 * that consumer's close or rebalance never removed it).
 */
const identity = (value: unknown): string => labelText(value) ?? OVERFLOW_LABEL;

/** The consumers (`instance`) of one source: every one not stopped, those up, those lost. */
interface SourceConsumers {
  readonly seen: Set<string>;
  readonly up: Set<string>;
  readonly lost: Set<string>;
}

/**
 * The connected gauge counts the consumers (by `instance`) up per transport and source, so one
 * consumer's disconnect leaves another of the same source counted. A reconnect is a `connected`
 * of an instance that lost its connection after it had connected; a consumer that stopped for
 * good (closed, or `retryInMs` null) is forgotten. A source keeps at most `admits` consumers not
 * stopped (`seen`, of which `up` and `lost` are parts): a later one's events are not counted,
 * nor is it remembered, until it connects again after one of them stopped, so ever-new instance
 * names never closed (a third party's transport) keep it bounded.
 */
class Connections {
  private readonly bySource = new Map<string, SourceConsumers>();

  constructor(
    private readonly gauge: Gauge<keyof SourceLabels>,
    private readonly reconnects: { inc(labels: SourceLabels): void },
    private readonly admits: (size: number) => boolean,
  ) {}

  up(labels: SourceLabels, instance: string): void {
    const key = JSON.stringify([labels.transport, labels.source]);
    let consumers = this.bySource.get(key);
    if (!consumers) {
      consumers = { seen: new Set(), up: new Set(), lost: new Set() };
      this.bySource.set(key, consumers);
    }
    if (!consumers.seen.has(instance)) {
      if (!this.admits(consumers.seen.size)) return;
      consumers.seen.add(instance);
    }
    if (consumers.lost.delete(instance)) this.reconnects.inc(labels);
    consumers.up.add(instance);
    this.gauge.set(labels, consumers.up.size);
  }

  down(labels: SourceLabels, instance: string, stopped: boolean): void {
    const key = JSON.stringify([labels.transport, labels.source]);
    const consumers = this.bySource.get(key);
    if (!consumers?.seen.has(instance)) {
      this.gauge.set(labels, consumers?.up.size ?? 0);
      return;
    }
    consumers.up.delete(instance);
    this.gauge.set(labels, consumers.up.size);
    if (!stopped) {
      consumers.lost.add(instance);
      return;
    }
    consumers.seen.delete(instance);
    consumers.lost.delete(instance);
    if (consumers.seen.size === 0) this.bySource.delete(key);
  }
}

type LagLabels = { transport: string; source: string; group: string; partition: string };

/** A partition's lag as reported: its real topic, group and partition, whatever its labels. */
interface PartitionLag {
  readonly labels: LagLabels;
  readonly series: string;
  readonly topic: string;
  readonly partition: number;
  owner: string;
  lag: number;
}

/**
 * The lag of each real partition (transport, topic, consumer group, partition), owned by the
 * consumer (`instance`) that reported it last: forgotten once a (re)join no longer assigns the
 * partition to that consumer (the partition's lag is another member's to report), or once that
 * consumer stopped (closed, or `retryInMs` null). A consumer that lost its session and
 * reconnects keeps its partitions: a stuck consumer stays visible. Another consumer's
 * partitions, of the same group or another, are never touched. Each series is the SUM of the
 * partitions its labels name: one partition's, or, once a label overflowed to `other`, every
 * such partition's (totals stay exact; a stuck one is not hidden by another reported later).
 * A series sums at most `admits` partitions (review 127): a later partition of a full series is
 * not kept, so its lag is not counted until a rebalance or a close frees a place; ever-new
 * partitions or topics (a third party's transport) keep the state bounded.
 */
class PartitionLags {
  private readonly partitions = new Map<string, PartitionLag>();
  /** The real partitions of each series (by its labels' key). */
  private readonly bySeries = new Map<string, Set<PartitionLag>>();

  constructor(
    private readonly gauge: Gauge<keyof LagLabels>,
    private readonly admits: (size: number) => boolean,
  ) {}

  set(
    instance: string,
    labels: LagLabels,
    reported: {
      readonly transport: string;
      readonly group: string;
      readonly topic: string;
      readonly partition: number;
    },
    lag: number,
  ): void {
    const value = usable(lag);
    if (value === null) return;
    const key = JSON.stringify([reported.transport, reported.topic, reported.group, reported.partition]);
    let entry = this.partitions.get(key);
    if (!entry) {
      const series = JSON.stringify(labels);
      let members = this.bySeries.get(series);
      if (members && !this.admits(members.size)) return;
      if (!members) {
        members = new Set();
        this.bySeries.set(series, members);
      }
      entry = { labels, series, ...reported, owner: '', lag: 0 };
      this.partitions.set(key, entry);
      members.add(entry);
    }
    entry.owner = instance;
    entry.lag = value;
    this.publish(entry);
  }

  /** `assignment` lists the partitions of each topic `instance` now owns; its others are dropped. */
  keepAssigned(instance: string, assignment: Readonly<Record<string, readonly number[]>>): void {
    this.drop(instance, ({ topic, partition }) => {
      const owned: unknown = Object.hasOwn(assignment, topic) ? assignment[topic] : undefined;
      return !(Array.isArray(owned) && owned.includes(partition));
    });
  }

  /** The consumer stopped for good: none of its partitions stays. */
  forget(instance: string): void {
    this.drop(instance, () => true);
  }

  private drop(instance: string, dropped: (entry: PartitionLag) => boolean): void {
    for (const [key, entry] of this.partitions) {
      if (entry.owner !== instance || !dropped(entry)) continue;
      this.partitions.delete(key);
      this.bySeries.get(entry.series)?.delete(entry);
      this.publish(entry);
    }
  }

  /** Sets `entry`'s series to the sum of its partitions' lags, removes it when none is left. */
  private publish(entry: PartitionLag): void {
    const members = this.bySeries.get(entry.series);
    if (!members || members.size === 0) {
      this.bySeries.delete(entry.series);
      this.gauge.remove(entry.labels);
      return;
    }
    let sum = 0;
    for (const member of members) sum += member.lag;
    this.gauge.set(entry.labels, sum);
  }
}
