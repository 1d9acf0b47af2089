/**
 * `deadLetter: { mode: 'queue', queueUrl }` must name a queue a copy can go to: a name, the
 * consumer's own queue (by URL or by name), a FIFO / standard mismatch or a queue of another
 * region is refused before anything is received; a dead-letter queue that does not answer keeps
 * the consumer from receiving; one deleted after attach leaves every invalid message in the
 * source queue (never deleted without a copy) and says so as a typed `error` event and an error
 * log. A copy never exceeds what SQS takes, also for a source message of exactly 256 KiB.
 */
import { describe, expect, it, jest } from '@jest/globals';
import {
  SendMessageBatchCommand,
  type Message,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import {
  REJECT_DETAIL_ATTRIBUTE,
  attachSqsConsumer,
  deleteQueue,
  type AttachConsumerOptions,
  type SqsConsumer,
} from '@ferry/sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import pino from 'pino';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { SQS_ENDPOINT, receiveAtLeast, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

const MAX = 262_144;

/** SQS's size of one message: body plus each attribute's name, type and value. */
function entryBytes(entry: SendMessageBatchRequestEntry): number {
  let bytes = Buffer.byteLength(entry.MessageBody ?? '');
  for (const [name, value] of Object.entries(entry.MessageAttributes ?? {})) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    bytes += Buffer.byteLength(value.StringValue ?? '');
  }
  return bytes;
}

describe('SQS dead-letter queue checks', () => {
  const f = useSqsConsumerFixture();
  const lines: { level: number; msg: string }[] = [];

  function attach(
    acceptor: PgTestAcceptor,
    options: Omit<AttachConsumerOptions, 'connection' | 'consumer'>,
  ): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'dlq',
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
      reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
      observer: (event) => events.push(event),
      logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
      ...options,
    });
    f.consumers.push(consumer);
    return { consumer, events };
  }

  const failureOf = (consumer: SqsConsumer) =>
    consumer.ready().then(
      () => null,
      (error: unknown) => error,
    );

  it.each([
    ['a queue name', (_source: string, dlqName: string) => dlqName],
    ['the consumer queue itself', (source: string) => source],
    ['a FIFO queue for a standard queue', () => `${SQS_ENDPOINT}/000000000000/${uniqueName('x')}.fifo`],
  ])('refuses %s as the dead-letter queue at attach', async (_label, dlq) => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('src') });
    const name = uniqueName('dead');
    await f.queues.declareBare({ name });
    expect(() =>
      attach(acceptor, { queueUrl, deadLetter: { mode: 'queue', queueUrl: dlq(queueUrl, name) } }),
    ).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'deadLetter.queueUrl' }));
  });

  it('refuses the consumer queue given by name and its URL as the dead-letter queue; the invalid message stays', async () => {
    const acceptor = await f.freshAcceptor();
    const name = uniqueName('self');
    const { queueUrl } = await f.queues.declareBare({ name });
    await sendRaw(f.connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'self-1' });
    const { consumer, events } = attach(acceptor, {
      queueUrl: name,
      deadLetter: { mode: 'queue', queueUrl },
    });

    const failure = await failureOf(consumer);
    expect(failure).toBeInstanceOf(FerryConfigError);
    expect((failure as FerryConfigError).option).toBe('deadLetter.queueUrl');
    expect(events.filter((e) => e.type === 'received')).toEqual([]);
    await consumer.close();
    const [kept] = await receiveAtLeast(f.connection, queueUrl, 1);
    expect(kept!.Body).toBe('not json');
  });

  it('refuses a dead-letter queue of another region than the connection', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('region') });
    const { consumer } = attach(acceptor, {
      queueUrl,
      deadLetter: {
        mode: 'queue',
        queueUrl: `https://sqs.eu-west-1.amazonaws.com/000000000000/${uniqueName('dead')}`,
      },
    });
    const failure = await failureOf(consumer);
    expect(failure).toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'deadLetter.queueUrl',
      message: expect.stringContaining('eu-west-1'),
    });
  });

  it('receives nothing while the dead-letter queue does not exist, and ready() names it', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('nodlq') });
    await sendRaw(f.connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'nodlq-1' });
    const missing = `${SQS_ENDPOINT}/000000000000/${uniqueName('missing-dead')}`;
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      deadLetter: { mode: 'queue', queueUrl: missing },
    });

    await waitFor('two failed attaches', () =>
      events.filter((e) => e.type === 'disconnected').length >= 2 ? true : undefined,
    );
    // A queue that does not exist is a refusal: ready() rejects at once (readiness.test.ts); retried.
    const refusal = await consumer.ready({ timeoutMs: 600_000 }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({
      code: 'FERRY_PERMANENT_FAILURE',
      message: expect.stringContaining(`dead-letter queue ${missing}`),
    });
    expect((refusal as Error).message).toMatch(/the queue does not exist/);
    expect(events.filter((e) => e.type === 'received')).toEqual([]);
    await consumer.close();
    const [kept] = await receiveAtLeast(f.connection, queueUrl, 1);
    expect(kept!.Body).toBe('not json');
  });

  it('keeps an invalid message in the source queue when its dead-letter queue was deleted after attach, and says so', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('gone') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('gone-dead') });
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      // Longer than the long poll (1 s) close() aborts: that poll cannot take the message back.
      retryBackoff: { initialMs: 3_000, maxMs: 3_000, jitter: 'none' },
    });
    await consumer.ready();
    await deleteQueue(f.connection, deadUrl);
    lines.length = 0;
    await sendRaw(f.connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'gone-1' });

    const failed = await waitFor('an error event', () => events.find((e) => e.type === 'error'));
    expect(failed).toMatchObject({
      error: expect.stringMatching(new RegExp(`^FERRY_CONFIG_INVALID: .*dead-letter queue ${deadUrl}`)),
    });
    expect(lines.filter((l) => l.level >= 50 && l.msg.includes(deadUrl))).not.toEqual([]);
    await consumer.close();
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
    // Not deleted without a copy: it comes back after the retry backoff.
    const [kept] = await receiveAtLeast(f.connection, queueUrl, 1);
    expect(kept!.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).toBe('gone-1');
  });

  it('sends a copy of a source message of exactly 256 KiB within 256 KiB, keeping its attributes; the reason takes the room left', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('max') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('max-dead') });
    const idAttribute = (id: string) => FERRY_HEADERS.messageId.length + 'String'.length + id.length;
    // Exactly the limit, body and attribute together.
    await sendRaw(f.connection, queueUrl, 'x'.repeat(MAX - idAttribute('max-full')), {
      [FERRY_HEADERS.messageId]: 'max-full',
    });
    // Room for the reason and 10 bytes of detail.
    const reasonRoom = FERRY_HEADERS.rejectReason.length + 'String'.length + 'payload_too_large'.length;
    const detailRoom = REJECT_DETAIL_ATTRIBUTE.length + 'String'.length + 10;
    await sendRaw(
      f.connection,
      queueUrl,
      'y'.repeat(MAX - idAttribute('max-room') - reasonRoom - detailRoom),
      { [FERRY_HEADERS.messageId]: 'max-room' },
    );
    // ElasticMQ does not enforce the 256 KiB limit, so the requests themselves are measured.
    const copies: number[] = [];
    const send = f.connection.client.send.bind(f.connection.client);
    const spy = jest.spyOn(f.connection.client, 'send').mockImplementation(((
      command: unknown,
      ...rest: never[]
    ) => {
      if (command instanceof SendMessageBatchCommand && command.input.QueueUrl === deadUrl) {
        copies.push(...(command.input.Entries ?? []).map(entryBytes));
      }
      return send(command as never, ...rest);
    }) as never);
    try {
      const { consumer } = attach(acceptor, { queueUrl, deadLetter: { mode: 'queue', queueUrl: deadUrl } });
      await consumer.ready();
      const dead = await receiveAtLeast(f.connection, deadUrl, 2, 30_000);
      const byId = new Map(dead.map((m) => [m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue, m]));
      expect([...byId.keys()].sort()).toEqual(['max-full', 'max-room']);
      const room = byId.get('max-room')!.MessageAttributes!;
      expect(room[FERRY_HEADERS.rejectReason]?.StringValue).toBe('payload_too_large');
      expect(Buffer.byteLength(room[REJECT_DETAIL_ATTRIBUTE]!.StringValue!)).toBe(10);
    } finally {
      spy.mockRestore();
    }
    expect(copies.filter((bytes) => bytes > MAX)).toEqual([]);
  });

  it('keeps the identity and tenant in a copy whatever x-ferry-* names a producer forges beside them', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('forged') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('forged-dead') });
    // SQS's 10 attributes each: eight forged x-ferry-* ones beside ferry's own two. The order a
    // receive lists them in is the endpoint's (a hash order on ElasticMQ), so ten messages: a copy
    // that kept the first eight x-ferry-* names read would lose an id or a tenant in almost all runs.
    const ids = Array.from({ length: 10 }, (_, m) => `forged-${m}`);
    for (const [m, id] of ids.entries()) {
      const forged = Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [`x-ferry-f${m}${i}`, `forged ${i}`]),
      );
      await sendRaw(f.connection, queueUrl, 'not json', {
        ...forged,
        [FERRY_HEADERS.messageId]: id,
        [FERRY_HEADERS.tenantId]: `tenant-${m}`,
      });
    }
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
    });
    await consumer.ready();

    const dead = await receiveAtLeast(f.connection, deadUrl, ids.length, 30_000);
    const kept = dead.map((copy) => {
      const copied = copy.MessageAttributes ?? {};
      return [
        copied[FERRY_HEADERS.messageId]?.StringValue,
        copied[FERRY_HEADERS.tenantId]?.StringValue,
        copied[FERRY_HEADERS.rejectReason]?.StringValue !== undefined,
        Object.keys(copied).length <= 10,
      ];
    });
    // Before: the first eight x-ferry-* names read were kept, often forged ones in place of the id and tenant.
    expect(kept.sort()).toEqual(ids.map((id, m) => [id, `tenant-${m}`, true, true]).sort());
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });

  it.each([
    ['its SQS MessageId', undefined],
    [
      "the identity extractor's id",
      { identity: (m: Message) => `legacy-${m.MessageAttributes?.a0?.StringValue}` },
    ],
  ])(
    'writes the identity the consumer used (%s) as x-ferry-message-id into a copy of a message without one, within 10 attributes (review 84)',
    async (_, extra) => {
      const acceptor = await f.freshAcceptor();
      const { queueUrl } = await f.queues.declareBare({ name: uniqueName('idless') });
      const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('idless-dead') });
      // SQS's 10 attributes, all the producer's own: the identity still takes a place in the copy.
      const attributes = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, `value ${i}`]));
      await sendRaw(f.connection, queueUrl, 'not json', attributes);
      const { consumer, events } = attach(acceptor, {
        queueUrl,
        deadLetter: { mode: 'queue', queueUrl: deadUrl },
        ...extra,
      });
      await consumer.ready();

      const [dead] = await receiveAtLeast(f.connection, deadUrl, 1, 30_000);
      // The copy can be received before SendMessageBatch's answer reaches the consumer, which
      // reports it dead-lettered only then: wait for the report.
      await waitFor('a dead-lettered event', () => events.find((e) => e.type === 'dead-lettered'));
      const used = events.flatMap((e) => (e.type === 'dead-lettered' ? [e.messageId] : []));
      const copied = dead!.MessageAttributes ?? {};
      expect(used).toHaveLength(1);
      expect(used[0]).toEqual(extra ? 'legacy-value 0' : expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(copied[FERRY_HEADERS.messageId]?.StringValue).toBe(used[0]);
      expect(copied[FERRY_HEADERS.rejectReason]?.StringValue).toBe('unparseable_body');
      expect(Object.keys(copied).length).toBeLessThanOrEqual(10);
      expect(events.filter((e) => e.type === 'error')).toEqual([]);
    },
  );

  it('dead-letters a message with attributes named __proto__ and constructor; the copy keeps what was read', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('proto') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('proto-dead') });
    const attributes = JSON.parse('{"__proto__": "p", "constructor": "c"}') as Record<string, string>;
    await sendRaw(f.connection, queueUrl, 'not json', {
      ...attributes,
      [FERRY_HEADERS.messageId]: 'proto-1',
    });
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
    });
    await consumer.ready();

    // Before: the copy's size was taken of `__proto__`, whose value the SDK reads back as
    // undefined: a TypeError each time, and the message never left the source queue.
    const [dead] = await receiveAtLeast(f.connection, deadUrl, 1, 30_000);
    const copied = dead!.MessageAttributes ?? {};
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(copied, 'constructor')?.value).toMatchObject({ StringValue: 'c' });
    expect(copied[FERRY_HEADERS.messageId]?.StringValue).toBe('proto-1');
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });
});
