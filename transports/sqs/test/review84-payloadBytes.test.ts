/**
 * Review finding (failed first), review 84. The inbox's `maxPayloadBytes` is the UTF-8 size of
 * `JSON.stringify(payload)` (core docs/inbox.md, options table), and the SQS README dead-letters a
 * message "over the acceptor's `maxPayloadBytes`". The consumer measures something else: the raw
 * body's bytes (src/wire.ts decodeMessage: `Buffer.byteLength(body)` against
 * `acceptor.maxPayloadBytes`, before the body is parsed). A body holds the same payload in more
 * bytes whenever its JSON is written with escapes or spaces, e.g.:
 * - a Python producer: `json.dumps` escapes every non-ASCII character by default
 *   (`ensure_ascii=True`): `é` is 6 bytes `\u00e9` on the wire, 2 in the payload;
 * - ferry's own SqsPublisher: U+FFFF (and U+FFFE) go out as the 6-byte escape `\uffff`
 *   (README, behaviour table), 3 bytes in the payload.
 * What happens: each is dead-lettered `payload_too_large` ("body is … bytes") although its payload
 * is well within the inbox's limit, and the same Inbox accepts the very same input when asked
 * directly. A valid message is lost to the dead-letter queue; ferry's own event, published by
 * ferry to ferry with one limit on both sides, never reaches the handler.
 * What should happen: the message is accepted (the pre-check must not be stricter than the
 * acceptor's own limit, e.g. measure the parsed payload, or leave the limit to the acceptor).
 * Cause: src/wire.ts decodeMessage (`bytes > options.maxPayloadBytes` on the body).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer, type SqsConnection } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  sendRaw,
  uniqueName,
  waitFor,
} from './support/sqs';

const LIMIT = 1_024;

describe('review84: the consumer measures maxPayloadBytes on the body, not on the payload', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  it("accepts a payload within the inbox's maxPayloadBytes whose body is written with escapes", async () => {
    const inbox = new Inbox(database.prisma, { global: 'shared', maxPayloadBytes: LIMIT });
    await inbox.initialize();
    const { queueUrl } = await queues.declare({ name: uniqueName('r84-bytes') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('r84-bytes-dead') });

    // A Python producer: json.dumps({"note": "é" * 300}) with its default ensure_ascii=True.
    const note = 'é'.repeat(300);
    const pythonBody = `{"note": "${'\\u00e9'.repeat(300)}"}`;
    expect(JSON.parse(pythonBody)).toEqual({ note });
    expect(Buffer.byteLength(JSON.stringify({ note }))).toBeLessThan(LIMIT);
    expect(Buffer.byteLength(pythonBody)).toBeGreaterThan(LIMIT);
    await sendRaw(connection, queueUrl, pythonBody, { 'x-ferry-message-id': 'python-1' });

    // ferry's own publisher: an event whose payload holds U+FFFF, within the same limit.
    const [event] = outboxMessages(1, queueUrl, { payload: { mark: '\uffff'.repeat(250) } });
    expect(Buffer.byteLength(JSON.stringify(event!.payload))).toBeLessThan(LIMIT);
    expect((await new SqsPublisher(connection).publish([event!], neverAborted()))[0]?.status).toBe('sent');

    // The same Inbox takes both payloads as they are.
    const direct = await inbox.acceptMany([
      {
        consumer: 'control',
        messageId: 'python-1',
        tenantId: null,
        payload: { note },
        headers: {},
        type: null,
      },
      {
        consumer: 'control',
        messageId: event!.id,
        tenantId: null,
        payload: event!.payload,
        headers: {},
        type: null,
      },
    ]);
    expect(direct.map((r) => r.kind)).toEqual(['accepted', 'accepted']);

    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(inbox, {
      connection,
      consumer: 'billing',
      queueUrl,
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      observer: (e) => events.push(e),
      logger: pino({ level: 'silent' }),
    });
    try {
      await consumer.ready();
      await waitFor('both messages settled', () =>
        events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0) >= 2 ? true : undefined,
      );
    } finally {
      await consumer.close();
    }
    const deadLettered = events.flatMap((e) =>
      e.type === 'dead-lettered' ? [`${e.messageId}: ${e.reason}`] : [],
    );
    expect(deadLettered).toEqual([]);
    const rows = await database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
    );
    expect(rows.map((r) => r.message_id)).toEqual(['python-1', event!.id].sort());
  });
});
