/**
 * Review 71, failing test: readiness wired as core's README shows it stays up after the RabbitMQ
 * consumer lost its broker for good.
 *
 * What I did: core's README ("Health") wires a consumer's readiness as
 * `transports: [{ name: 'rabbitmq', check: () => consumer.ready() }]`, and says readiness is
 * "database reachable, schema in place, every transport probe resolved". A RabbitMQ consumer
 * attached through a TCP proxy (only this test's connection goes through it), then the proxy went
 * away: the connection is cut and every reconnect is refused (ECONNREFUSED), as when the broker's
 * host is gone. The consumer reports `disconnected` (and keeps retrying).
 * What happened: ready() resolved once, at the first attach, and stays resolved for ever
 * (AttachAttempts: "ready() resolves once the consumer attached the first time"), so
 * `health.readiness()` keeps answering `transport rabbitmq: up` while the consumer has no
 * connection and consumes nothing: Kubernetes keeps routing to a pod whose consumer is dead, and
 * no readiness alert fires for as long as the outage lasts.
 * What should happen: the probe the README recommends says down while the consumer is not
 * connected (and up again once it re-attached).
 * Fix direction: give consumers a probe of their current state (e.g. `consumer.check()` /
 * `consumer.connected`, rejecting while disconnected, as the `connected` gauge knows), and show
 * that in the README's Health example; or say in the README that ready() is a start-up gate only.
 *
 * Fixed (fix71a): every consumer has check(), the probe of its current state (checkAttached in
 * core's transport kit); core's README now wires it as `check: () => consumer.check()` and says
 * ready() is the start-up gate. This test follows the README as it now reads.
 */
import { createHealth, Inbox, pgTransactions } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer, RabbitConnection } from '@ferry/rabbitmq';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import pino from 'pino';
import { AMQP_URL, InboxQueue, uniqueName, waitFor } from './support/broker';
import { HoldingProxy } from './support/holdingProxy';

jest.setTimeout(60_000);

const silent = pino({ level: 'silent' });

describe("readiness with the README's consumer probe", () => {
  const setup = new InboxQueue('review71ready');
  let proxy: HoldingProxy | undefined;
  let pool: Pool | undefined;
  let connection: RabbitConnection | undefined;

  afterAll(async () => {
    await setup.attached?.close();
    setup.attached = null;
    await connection?.close();
    await proxy?.close().catch(() => undefined);
    await pool?.end();
  });

  it('says the transport is down while the consumer has lost its broker', async () => {
    proxy = await HoldingProxy.start(AMQP_URL);
    pool = listened(new Pool({ connectionString: setup.database.url, max: 2 }));
    const inbox = new Inbox(pgTransactions(pool), { worker: { enabled: false }, logger: silent });
    connection = new RabbitConnection({
      url: proxy.urlFor(AMQP_URL),
      connectionName: uniqueName('review71'),
      reconnectBackoff: { initialMs: 50, maxMs: 200 },
      logger: silent,
    });
    const events: TransportConsumerEvent[] = [];
    const consumer = attachRabbitConsumer(inbox, {
      connection,
      queue: setup.queue,
      consumer: 'billing',
      logger: silent,
      observer: (event) => {
        events.push(event);
      },
    });
    setup.attached = consumer;
    await consumer.ready({ timeoutMs: 20_000 });

    const health = createHealth({
      db: setup.database.db,
      checkTimeoutMs: 2_000,
      transports: [{ name: 'rabbitmq', check: () => consumer.check() }],
    });
    expect((await health.readiness()).status).toBe('up');

    // The broker goes away for this consumer: its connection is cut, every reconnect refused.
    await proxy.close();
    await waitFor('the consumer reported its connection lost, and a failed reconnect', () =>
      events.filter((event) => event.type === 'disconnected').length >= 2 ? true : undefined,
    );
    const last = events[events.length - 1];
    expect(last?.type).toBe('disconnected');

    const ready = await health.readiness();
    expect(ready.checks.find((check) => check.name === 'transport rabbitmq')).toMatchObject({
      status: 'down',
    });
    expect(ready.status).toBe('down');
  });
});
