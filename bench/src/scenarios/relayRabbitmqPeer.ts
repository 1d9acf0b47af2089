import type { ConfirmChannel } from 'amqplib';
import type { TransactionalMessage } from 'pg-transactional-outbox';
import { PEER_BATCH, PgTransactionalOutboxPeer, type PeerDrain } from '../pgTransactionalOutbox';
import { rate, timed, type Scenario } from '../runner';
import { openRelaySides, relayRun } from './relay';
import { openRabbitBroker } from './relayRabbitmq';

/**
 * The peer's message handler: publishes one outbox message (the whole message as JSON, as the
 * peer's inbox side expects it) persistent and mandatory to `queue`, and resolves when the
 * broker confirmed it.
 */
function peerPublisher(channel: ConfirmChannel, queue: string) {
  return (message: TransactionalMessage): Promise<void> =>
    new Promise((resolve, reject) => {
      const options = {
        persistent: true,
        mandatory: true,
        messageId: message.id,
        type: message.messageType,
        contentType: 'application/json',
      };
      channel.publish('', queue, Buffer.from(JSON.stringify(message)), options, (error) =>
        error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
      );
    });
}

/**
 * ferry's relay against the Node peer pg-transactional-outbox (0.5.x) on the same workload: `n`
 * events of the same type and payload committed to each side's outbox before the clock starts,
 * published to the same durable RabbitMQ queue, each confirmed by the broker, until every row is
 * marked done in PostgreSQL. Both sides share one fresh database. Subject: `createRelay` +
 * `RabbitPublisher` (batches of BATCH_SIZE). Baseline: the peer's polling listener (PEER_BATCH
 * messages at a time, each in its own transaction: lock the row, publish, mark it processed).
 * A run verifies its rows and that the queue holds exactly `n` messages.
 */
export const relayRabbitmqPeer: Scenario = {
  name: 'relay-rabbitmq-peer',
  unit: 'events/s',
  better: 'higher',
  baselineLabel: `pg-transactional-outbox 0.5 polling listener, ${PEER_BATCH} at a time`,
  subjectLabel: 'createRelay + RabbitPublisher',
  targets: [{ on: 'ratio', bound: 3 }],
  async open() {
    const { bench, broker } = await openRelaySides(openRabbitBroker);
    let peer: PgTransactionalOutboxPeer;
    try {
      peer = await PgTransactionalOutboxPeer.open(bench.database.url);
    } catch (error) {
      await broker.close();
      await bench.close();
      throw error;
    }
    const publish = peerPublisher(broker.channel, broker.queue);
    return {
      async baseline(n) {
        await broker.reset?.();
        await peer.backlog(n);
        let drained: PeerDrain | undefined;
        const sample = await timed(async () => {
          drained = await peer.drain(n, publish);
          return { ops: drained.published, verified: true };
        });
        const verified = sample.ops === n && (await peer.allProcessed(n)) && (await broker.depth()) === n;
        const { retries = 0, firstPassMs = 0 } = drained ?? {};
        const firstPass = rate(n - retries, firstPassMs, true).value;
        // `retries` stays in the JSON report; the table shows the extras both sides have.
        return { ...sample, verified, extra: { ...sample.extra, firstPass, retries } };
      },
      async subject(n) {
        const sample = await relayRun(bench, broker, n);
        const verified = sample.verified && (await broker.depth()) === n;
        // The relay drains without a retry (relayRun fails the run on one): its first pass is the run.
        return { ...sample, verified, extra: { ...sample.extra, firstPass: sample.value } };
      },
      async close() {
        await peer.close();
        await broker.close();
        await bench.close();
      },
    };
  },
};
