import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import {
  FERRY_HEADERS,
  FerryConfigError,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
} from '@ferry/core';
import {
  attachSqsConsumer,
  type AttachConsumerOptions,
  type SqsConnection,
  type SqsConsumer,
} from '@ferry/sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import {
  SQS_ENDPOINT,
  TestQueues,
  openConnection,
  receiveAtLeast,
  sendRaw,
  uniqueName,
  waitFor,
} from './support/sqs';

/** The real PgTestAcceptor; any call holding a `poison` id throws a plain (not batch-wide) error. */
class PoisonedAcceptor implements InboxAcceptor {
  readonly poison = new Set<string>();
  constructor(readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    if (inputs.some((i) => this.poison.has(i.messageId))) {
      return Promise.reject(new Error('row refused by PostgreSQL'));
    }
    return this.inner.acceptMany(inputs);
  }
}

/** SQS's size of a SendMessageBatch request: every body and attribute (name, type, value). */
function batchBytes(entries: readonly SendMessageBatchRequestEntry[]): number {
  let bytes = 0;
  for (const entry of entries) {
    bytes += Buffer.byteLength(entry.MessageBody ?? '');
    for (const [name, value] of Object.entries(entry.MessageAttributes ?? {})) {
      bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
      bytes += Buffer.byteLength(value.StringValue ?? '');
    }
  }
  return bytes;
}

describe('SQS consumer under hostile input', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;
  const consumers: SqsConsumer[] = [];

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  async function freshAcceptor(): Promise<PoisonedAcceptor> {
    await database.db.execute('DROP TABLE IF EXISTS test_inbox');
    return new PoisonedAcceptor(await PgTestAcceptor.create(database.db));
  }

  function attach(
    acceptor: InboxAcceptor,
    options: Omit<AttachConsumerOptions, 'connection' | 'consumer'>,
  ): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection,
      consumer: 'orders',
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
      observer: (event) => events.push(event),
      logger: pino({ level: 'silent' }),
      ...options,
    });
    consumers.push(consumer);
    return { consumer, events };
  }

  const reasonOf = (m: { MessageAttributes?: Record<string, { StringValue?: string }> }) =>
    m.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue;
  const idOf = (m: { MessageAttributes?: Record<string, { StringValue?: string }> }) =>
    m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue;

  it('deletes the valid neighbours of a message whose acceptance fails alone and dead-letters only it', async () => {
    const acceptor = await freshAcceptor();
    acceptor.poison.add('poison');
    const { queueUrl } = await queues.declare({ name: uniqueName('iso') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('iso-dead') });
    for (const id of ['v1', 'v2', 'poison', 'v3']) {
      await sendRaw(connection, queueUrl, JSON.stringify({ id }), { [FERRY_HEADERS.messageId]: id });
    }
    const { consumer } = attach(acceptor, { queueUrl, deadLetter: { mode: 'queue', queueUrl: deadUrl } });
    await consumer.ready();

    const [dead] = await receiveAtLeast(connection, deadUrl, 1);
    expect([idOf(dead!), reasonOf(dead!)]).toEqual(['poison', 'acceptance_failed']);
    await waitFor('three stored', async () =>
      (await acceptor.inner.storedIds()).length === 3 ? true : undefined,
    );
    expect((await acceptor.inner.storedIds()).sort()).toEqual(['v1', 'v2', 'v3']);
  });

  it('pins the tenant of a fixed-tenant queue and dead-letters an attribute naming another tenant', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({ name: uniqueName('tenant') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('tenant-dead') });
    await sendRaw(connection, queueUrl, '{"n":1}', { [FERRY_HEADERS.messageId]: 'plain' });
    await sendRaw(connection, queueUrl, '{"n":2}', {
      [FERRY_HEADERS.messageId]: 'spoofed',
      [FERRY_HEADERS.tenantId]: 'globex',
    });
    const { consumer } = attach(acceptor, {
      queueUrl,
      tenant: { fixed: 'acme' },
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
    });
    await consumer.ready();

    const [dead] = await receiveAtLeast(connection, deadUrl, 1);
    expect([idOf(dead!), reasonOf(dead!)]).toEqual(['spoofed', 'tenant_mismatch']);
    const stored = await waitFor('one stored', async () => {
      const rows = await acceptor.inner.stored();
      return rows.length === 1 ? rows : undefined;
    });
    expect(stored.map((r) => [r.messageId, r.tenantId])).toEqual([['plain', 'acme']]);
  });

  it('refuses to attach in redrive mode to a queue without a RedrivePolicy', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declareBare({ name: uniqueName('no-redrive') });
    await sendRaw(connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'poison-1' });
    const { consumer, events } = attach(acceptor, { queueUrl, deadLetter: { mode: 'redrive' } });

    const failure = await consumer.ready().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(FerryConfigError);
    expect((failure as FerryConfigError).option).toBe('deadLetter');
    expect(events.filter((e) => e.type === 'received')).toEqual([]);
    expect(events.filter((e) => e.type === 'disconnected')).toEqual([
      expect.objectContaining({ retryInMs: null, error: expect.stringMatching(/^FERRY_CONFIG_INVALID/) }),
    ]);
    await consumer.close();
  });

  it('keeps polling a queue that does not exist, and says so in the log on every failed poll, not only to an observer', async () => {
    const acceptor = await freshAcceptor();
    const lines: { msg: string; err?: unknown }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const missing = `${SQS_ENDPOINT}/000000000000/${uniqueName('missing')}`;
    const { consumer, events } = attach(acceptor, {
      queueUrl: missing,
      deadLetter: { mode: 'redrive' },
      reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
      logger,
    });

    await waitFor('two failed polls', () =>
      events.filter((e) => e.type === 'disconnected').length >= 2 ? true : undefined,
    );
    // ready() rejects with the refusal, so a caller learns why (readiness.test.ts); polling goes on.
    await expect(consumer.ready({ timeoutMs: 1 })).rejects.toMatchObject({
      code: 'FERRY_PERMANENT_FAILURE',
      message: expect.stringMatching(/does not exist/),
    });
    await consumer.close();
    const failed = events.filter((e) => e.type === 'disconnected');
    const warned = lines.filter((line) => line.msg.includes(missing));
    expect(warned).toHaveLength(failed.length);
    expect(warned.every((line) => /does not exist/.test(line.msg))).toBe(true);
  });

  it('reports each invalid message dead-lettered with its reason in redrive mode', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({
      name: uniqueName('redrive'),
      deadLetter: { maxReceiveCount: 5 },
    });
    await sendRaw(connection, queueUrl, '[1,2]', { [FERRY_HEADERS.messageId]: 'array-1' });
    const { consumer, events } = attach(acceptor, { queueUrl, deadLetter: { mode: 'redrive' } });
    await consumer.ready();

    const invalid = await waitFor('a dead-lettered event', () =>
      events.find((e) => e.type === 'dead-lettered'),
    );
    expect(invalid).toEqual({
      type: 'dead-lettered',
      transport: 'sqs',
      source: queueUrl,
      messageId: 'array-1',
      reason: 'unparseable_body',
    });
  });

  it('dead-letters a batch of large invalid messages in requests within the batch byte limit', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({ name: uniqueName('big') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('big-dead') });
    const ids = Array.from({ length: 10 }, (_, i) => `big-${i}`);
    // 10 x ~100 KB = 1 MB in one received batch, four times SendMessageBatch's 256 KiB.
    for (const id of ids) {
      await sendRaw(connection, queueUrl, JSON.stringify({ blob: 'x'.repeat(100_000) }), {
        [FERRY_HEADERS.messageId]: id,
      });
    }
    // ElasticMQ does not enforce the 256 KiB request limit, so the requests themselves are measured.
    const requestBytes: number[] = [];
    const send = connection.client.send.bind(connection.client);
    const spy = jest.spyOn(connection.client, 'send').mockImplementation(((
      command: unknown,
      ...rest: never[]
    ) => {
      if (command instanceof SendMessageBatchCommand && command.input.QueueUrl === deadUrl) {
        requestBytes.push(batchBytes(command.input.Entries ?? []));
      }
      return send(command as never, ...rest);
    }) as never);
    try {
      const { consumer } = attach(acceptor, { queueUrl, deadLetter: { mode: 'queue', queueUrl: deadUrl } });
      await consumer.ready();
      const dead = await receiveAtLeast(connection, deadUrl, 10, 30_000);
      expect(dead.map(idOf).sort()).toEqual([...ids].sort());
      expect(new Set(dead.map(reasonOf))).toEqual(new Set(['payload_too_large']));
    } finally {
      spy.mockRestore();
    }
    expect(requestBytes.length).toBeGreaterThan(1);
    expect(requestBytes.filter((bytes) => bytes > 262_144)).toEqual([]);
  });
});
