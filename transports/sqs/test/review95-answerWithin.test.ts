/**
 * Review 95 (the publishers' answerWithinMs, review 93): the relay gives up on a publish() itself,
 * and charges the batch (`retryable`, an attempt spent), only past the publisher's declared
 * answerWithinMs and a second, trusting it to be the longest publish() takes by the publisher's
 * own deadlines (core's Publisher contract). The SQS publisher declares 2 x confirmTimeoutMs, but
 * it sends the messages left unanswered last time (deferred) alone, one after another, each on a
 * fresh confirmTimeoutMs, for as long as SQS answered any request of the call: SQS going silent
 * right after answering the call's first request costs the call one confirmTimeoutMs per deferred
 * message. The relay then gave up on it and charged every event of the batch ("did not answer
 * within its answerWithinMs"), where the publisher would have reported the outage `unavailable`.
 */
import { createRelay, emitMany } from '@ferry/core';
import { SqsPublisher, declareQueue, deleteQueue } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase } from '../../../test-support/database';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { SQS_ENDPOINT, openConnection, proxiedConnection, uniqueName } from './support/sqs';

jest.setTimeout(60_000);

const DEFERRED = 5;

test("SQS silent after answering a call's first request: the publish answers within its answerWithinMs, the relay charges nothing for it", async () => {
  const endpoint = new URL(SQS_ENDPOINT);
  const direct = openConnection();
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  const { queueUrl } = await declareQueue(direct, { name: uniqueName('answer-within') });
  const connection = proxiedConnection(proxy);
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 1_000 });
  const database = await createTestDatabase();
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: {
      lease: { duration: 2_000 },
      retry: { initialDelay: 0, maxDelay: 0 },
      circuit: { failureThreshold: 1_000 },
    },
  });
  const destination = proxy.urlFor(queueUrl);
  // SQS goes silent (packets dropped) as soon as it answered the call's first SendMessageBatch.
  let silenceAfterSend = false;
  connection.client.middlewareStack.add(
    (next, context) => async (args) => {
      const output = await next(args);
      if (silenceAfterSend && context.commandName === 'SendMessageBatchCommand') {
        silenceAfterSend = false;
        await proxy.setMode('blackhole');
      }
      return output;
    },
    { step: 'initialize', name: 'review95Silence' },
  );
  try {
    await connection.queueUrl(destination, new AbortController().signal);
    const { ids } = await emitMany(
      database.db,
      Array.from({ length: DEFERRED }, (_, n) => ({
        type: 'doc.stored',
        destination,
        payload: { n },
        maxRetries: 5,
      })),
    );
    // A first silent outage: the events' request goes unanswered (unavailable, no attempt spent);
    // the publisher remembers them, so each goes alone next time (deferred).
    await proxy.setMode('blackhole');
    await relay.runOnce();
    await proxy.setMode('pass');
    // The next cycle: a newer event first (answered), then SQS goes silent again.
    await emitMany(database.db, [
      { type: 'doc.stored', destination, payload: { fresh: true }, maxRetries: 5 },
    ]);
    silenceAfterSend = true;
    await relay.runOnce();
    const rows = await database.db.query<{ retry_count: number; last_error: string | null }>(
      'SELECT retry_count, last_error FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY seq',
      [ids],
    );
    // Before: all five charged by the relay ("publisher did not answer within its answerWithinMs
    // and a margin (3000 ms)"): the publish took one confirmTimeoutMs per deferred event.
    expect(rows.filter((row) => /did not answer within/.test(row.last_error ?? ''))).toEqual([]);
    // The first deferred event had a whole confirmTimeoutMs while SQS had answered this call: the
    // transport's own rule (too slow to upload) charges it; the others are the outage's.
    expect(rows.filter((row) => row.retry_count > 0).length).toBeLessThanOrEqual(1);
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
    await proxy.close();
    await deleteQueue(direct, queueUrl);
    await direct.close();
    await database.drop();
  }
});
