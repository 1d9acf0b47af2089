import {
  FERRY_HEADERS,
  FerryError,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
} from '@ferry/core';
import {
  RabbitConnection,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
  type RabbitConsumerOptions,
} from '@ferry/rabbitmq';
import type { GetMessage, Options } from 'amqplib';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { declareWorkQueue } from '@ferry/rabbitmq';
import {
  AMQP_URL,
  openTestBroker,
  unackedCount,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';

/**
 * The real PgTestAcceptor, with per-id failures a test arms: `poison` ids make any call that
 * holds them throw a plain (not batch-wide) error, as a row PostgreSQL refuses does;
 * `refuseTimes` ids make the call fail with a retriable FERRY_DATABASE_ERROR that many times (not an
 * outage, which the consumer holds through: a failure the batch is retried for round the retry tiers).
 */
class ScriptedAcceptor implements InboxAcceptor {
  readonly poison = new Set<string>();
  readonly refuseTimes = new Map<string, number>();
  /** Ids of inputs in calls that committed, in order. */
  readonly committed: string[] = [];
  constructor(private readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    const ids = inputs.map((i) => i.messageId);
    if (ids.some((id) => this.poison.has(id))) throw new Error('row refused by PostgreSQL');
    const refused = ids.filter((id) => (this.refuseTimes.get(id) ?? 0) > 0);
    for (const id of refused) this.refuseTimes.set(id, this.refuseTimes.get(id)! - 1);
    if (refused.length > 0) throw new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown');
    const results = await this.inner.acceptMany(inputs);
    this.committed.push(...ids);
    return results;
  }
}

describe('RabbitMQ consumer under hostile input', () => {
  let database: TestDatabase;
  let broker: TestBroker;
  let acceptor: ScriptedAcceptor;
  let inner: PgTestAcceptor;
  let queue: string;
  let connection: RabbitConnection;
  let consumer: RabbitConsumer | null;

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    broker = await openTestBroker();
  });

  afterAll(async () => {
    await broker.close();
    await database.drop();
  });

  beforeEach(async () => {
    await database.db.execute('DROP TABLE IF EXISTS test_inbox');
    inner = await PgTestAcceptor.create(database.db);
    acceptor = new ScriptedAcceptor(inner);
    queue = uniqueName('hostile');
    connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('hostile') });
    consumer = null;
  });

  afterEach(async () => {
    const tiers = consumer?.names.retryTiersMs;
    await consumer?.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue, ...(tiers ? { retryTiersMs: tiers } : {}) });
  });

  async function attach(options: Partial<RabbitConsumerOptions> = {}): Promise<RabbitConsumer> {
    consumer = attachRabbitConsumer(acceptor, {
      connection,
      queue,
      consumer: 'billing',
      retryBackoff: { initialMs: 100, maxMs: 200 },
      logger: pino({ level: 'silent' }),
      ...options,
    });
    await consumer.ready();
    return consumer;
  }

  function publish(id: string, body: object, headers: Options.Publish['headers'] = {}): void {
    broker.channel.sendToQueue(queue, Buffer.from(JSON.stringify(body)), {
      messageId: id,
      contentType: 'application/json',
      headers,
    });
  }

  async function deadLetters(count: number): Promise<Map<string, GetMessage>> {
    const collected: GetMessage[] = [];
    return waitFor(`${count} dead letters`, async () => {
      collected.push(...(await broker.drain(`${queue}.dlq`)));
      if (collected.length < count) return undefined;
      return new Map(collected.map((m) => [m.properties.messageId as string, m]));
    });
  }

  function reasonOf(letter: GetMessage | undefined): unknown {
    return letter?.properties.headers?.[FERRY_HEADERS.rejectReason];
  }

  it('acks the valid neighbours of a delivery whose acceptance fails alone and dead-letters only it', async () => {
    acceptor.poison.add('poison');
    // Queued before the consumer attaches, so the five arrive together in one batch.
    await declareWorkQueue(broker.channel, { queue, retryTiersMs: [100, 200] });
    for (const id of ['v1', 'v2', 'poison', 'v3', 'v4']) publish(id, { id });
    await attach();

    const dead = await deadLetters(1);
    expect(reasonOf(dead.get('poison'))).toBe('acceptance_failed');
    expect(dead.get('poison')?.properties.headers?.['x-ferry-reject-detail']).toContain('row refused');
    await waitFor('four stored', async () => ((await inner.storedIds()).length === 4 ? true : undefined));
    expect((await inner.storedIds()).sort()).toEqual(['v1', 'v2', 'v3', 'v4']);
    await waitFor('nothing unacked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
    for (const retryQueue of consumer!.names.retryQueues) expect(await broker.readyCount(retryQueue)).toBe(0);
  });

  it('refuses a topology with a key it does not know (a retired name) instead of declaring the defaults', async () => {
    // Before 0.x: declareWorkQueue(channel, { queue, deadLetterExchange }); ignoring the key would
    // dead-letter into <queue>.dlx, not the exchange the caller's infrastructure watches.
    const retired = { queue, deadLetterExchange: `${queue}.dead` } as never;
    await expect(declareWorkQueue(broker.channel, retired)).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'deadLetterExchange',
      message: expect.stringContaining('renamed to deadLetter.exchange'),
    });
    await expect(declareWorkQueue(broker.channel, { queue, bindigns: [] } as never)).rejects.toMatchObject({
      option: 'bindigns',
    });
  });

  it('pins the tenant of a fixed-tenant queue and dead-letters a header naming another tenant', async () => {
    await attach({ tenant: { fixed: 'acme' } });
    publish('plain', { n: 1 });
    publish('same', { n: 2 }, { [FERRY_HEADERS.tenantId]: 'acme' });
    publish('spoofed', { n: 3 }, { [FERRY_HEADERS.tenantId]: 'globex' });

    const dead = await deadLetters(1);
    expect(reasonOf(dead.get('spoofed'))).toBe('tenant_mismatch');
    await waitFor('two stored', async () => ((await inner.stored()).length === 2 ? true : undefined));
    const stored = await inner.stored();
    expect(stored.map((r) => [r.messageId, r.tenantId]).sort()).toEqual([
      ['plain', 'acme'],
      ['same', 'acme'],
    ]);
  });

  it('ignores a transport attempt counter that did not come back from its own retry queues', async () => {
    acceptor.refuseTimes.set('forged', 1_000);
    await attach({ maxTransportRetries: 2 });
    publish('forged', { n: 1 }, { [FERRY_HEADERS.transportAttempts]: '99' });

    const dead = await deadLetters(1);
    const letter = dead.get('forged');
    expect(reasonOf(letter)).toBe('transport_retries_exhausted');
    expect(letter?.properties.headers?.[FERRY_HEADERS.transportAttempts]).toBe('2');
    // First delivery plus two trips through the retry tiers.
    expect(inner.seen).toEqual([]);
    expect(1_000 - acceptor.refuseTimes.get('forged')!).toBe(3);
  });

  it('does not hold a short retry behind a longer one (one retry queue per delay tier)', async () => {
    // Tiers 200 ms and 3 s: "slow" fails twice (its second retry waits 3 s), "fast" once (200 ms).
    await attach({ retryBackoff: { initialMs: 200, multiplier: 15, maxMs: 3_000 }, maxTransportRetries: 3 });
    expect(consumer!.names.retryTiersMs).toEqual([200, 3_000]);
    // Tiers given as an option are used as given (sorted); nothing is declared for this one.
    const given = attachRabbitConsumer(acceptor, {
      connection,
      queue: `${queue}-given`,
      consumer: 'given',
      retryTiersMs: [50, 5],
      declareTopology: false,
      logger: pino({ level: 'silent' }),
    });
    expect(given.names.retryTiersMs).toEqual([5, 50]);
    await given.close();
    acceptor.refuseTimes.set('slow', 2);
    publish('slow', { n: 1 });
    const longTier = consumer!.names.retryQueues[1]!;
    await waitFor('slow in the 3 s tier', async () =>
      acceptor.refuseTimes.get('slow') === 0 && (await broker.readyCount(longTier)) === 1 ? true : undefined,
    );
    acceptor.refuseTimes.set('fast', 1);
    publish('fast', { n: 2 });

    await waitFor('both stored', async () => ((await inner.storedIds()).length === 2 ? true : undefined));
    expect(acceptor.committed).toEqual(['fast', 'slow']);
  });
});
