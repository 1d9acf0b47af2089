import { FERRY_HEADERS, FerryError } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import pino from 'pino';
import {
  closeConnectionsNamed,
  consumerCount,
  exchangeExists,
  unackedCount,
  waitFor,
  type TestBroker,
} from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

describe('attachRabbitConsumer', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));
  const attach = f.attach;

  /** Publishes straight to the work queue through the default exchange. */
  function toQueue() {
    return `/${f.queue}`;
  }

  function rawPublish(body: Buffer | string, options: Parameters<TestBroker['channel']['sendToQueue']>[2]) {
    f.broker.channel.sendToQueue(f.queue, Buffer.isBuffer(body) ? body : Buffer.from(body), options);
  }

  async function deadLetters(count: number): Promise<GetMessage[]> {
    const collected: GetMessage[] = [];
    return waitFor(`${count} dead letters`, async () => {
      collected.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      return collected.length >= count ? collected : undefined;
    });
  }

  it('accepts each message once although duplicates were published, and acks everything', async () => {
    await attach();
    const messages = outboxMessages(30, { destination: toQueue() });
    const duplicates = messages.slice(0, 10);

    const outcomes = await f.publisher.publish([...messages, ...duplicates], neverAborted());
    expect(outcomes.every((o) => o.status === 'sent')).toBe(true);

    await waitFor('40 deliveries offered', () => (f.acceptor.seen.length >= 40 ? true : undefined));
    await f.expectStoredOnce(messages.map((m) => m.id));
    expect(await f.backOnClose()).toBe(0);
    const stored = await f.acceptor.storedIds();
    const expected = messages.map((m) => m.id);
    expect({
      missing: expected.filter((id) => !stored.includes(id)),
      extra: stored.filter((id, i) => !expected.includes(id) || stored.indexOf(id) !== i),
    }).toEqual({ missing: [], extra: [] });
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
    const first = (await f.acceptor.stored()).find((row) => row.messageId === messages[0]!.id)!;
    expect(first).toMatchObject({ tenantId: 'tenant-a', type: 'order.placed' });
    expect(first.headers).toMatchObject({
      'x-app': 'shop',
      [FERRY_HEADERS.correlationId]: messages[0]!.correlationId,
    });
  });

  it('accepts deliveries that arrived together through one acceptMany call', async () => {
    f.acceptor.hold();
    // One batch in flight: the deliveries that arrive meanwhile wait and form the next one.
    await attach({ maxBatchSize: 50, maxBatchesInFlight: 1 });
    await f.publisher.publish([outboxMessage({ destination: toQueue() })], neverAborted());
    await waitFor('the first batch to be held', () => (f.acceptor.held() === 1 ? true : undefined));
    await f.publisher.publish(outboxMessages(20, { destination: toQueue() }), neverAborted());
    // None ready, none acked (the first is held): all 21 pushed to the consumer, unacked.
    await waitFor('all deliveries pushed to the consumer', async () =>
      (await f.broker.readyCount(f.queue)) === 0 ? true : undefined,
    );

    f.acceptor.release();

    await waitFor('21 stored', async () => ((await f.acceptor.storedIds()).length === 21 ? true : undefined));
    expect(f.acceptor.batches).toEqual([1, 20]);
  });

  it('does not ack a delivery while its acceptance has not committed', async () => {
    f.acceptor.hold();
    await attach();
    await f.publisher.publish(outboxMessages(5, { destination: toQueue() }), neverAborted());
    await waitFor('acceptance to start', () => (f.acceptor.held() > 0 ? true : undefined));
    await waitFor('all five delivered', async () =>
      (await f.broker.readyCount(f.queue)) === 0 ? true : undefined,
    );

    expect(await unackedCount(f.queue)).toBe(5);
    f.acceptor.release();
    await waitFor('all five stored', async () =>
      (await f.acceptor.storedIds()).length === 5 ? true : undefined,
    );
    expect(await f.backOnClose()).toBe(0);
  });

  it('dead-letters invalid deliveries with the reason in a header and accepts the valid ones', async () => {
    await attach({ maxPayloadBytes: 200 });
    rawPublish('{"ok":true}', { contentType: 'application/json' });
    rawPublish('{not json', { messageId: 'unparseable', contentType: 'application/json' });
    rawPublish('[1,2]', { messageId: 'array', contentType: 'application/json' });
    rawPublish(JSON.stringify({ big: 'x'.repeat(500) }), {
      messageId: 'large',
      contentType: 'application/json',
    });
    rawPublish('hello', { messageId: 'text', contentType: 'text/plain' });
    rawPublish('{"valid":true}', { messageId: 'valid-1', contentType: 'application/json; charset=utf-8' });

    const dead = await deadLetters(5);

    const reasons = Object.fromEntries(
      dead.map((m) => [m.properties.messageId ?? 'none', m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
    );
    expect(reasons).toEqual({
      none: 'missing_identity',
      unparseable: 'unparseable_body',
      array: 'unparseable_body',
      large: 'payload_too_large',
      text: 'unsupported_content_type',
    });
    await waitFor('the valid one stored', async () =>
      (await f.acceptor.storedIds()).includes('valid-1') ? true : undefined,
    );
    expect(await f.acceptor.storedIds()).toEqual(['valid-1']);
    expect(await f.backOnClose()).toBe(0);
  });

  it('measures maxPayloadBytes on the payload as the inbox does, never on its escaped or indented body (review 84)', async () => {
    const limit = 1_024;
    await attach({ maxPayloadBytes: limit });
    const json = { contentType: 'application/json' };
    // Python's json.dumps (ensure_ascii): `é` is 2 bytes in the payload, 6 (`\u00e9`) in the body.
    const note = 'é'.repeat(300);
    const python = `{"note": "${'\\u00e9'.repeat(note.length)}"}`;
    expect(JSON.parse(python)).toEqual({ note });
    expect(Buffer.byteLength(JSON.stringify({ note }))).toBeLessThan(limit);
    expect(Buffer.byteLength(python)).toBeGreaterThan(limit);
    rawPublish(python, { messageId: 'python-1', ...json });
    // Indented far beyond 6 × the limit: whitespace between tokens is not counted.
    rawPublish(`{${'\n  '.repeat(3 * limit)}"n": 1}`, { messageId: 'pretty-1', ...json });
    // Over the limit as a payload, within 6 × it as a body: parsed, then measured.
    rawPublish(JSON.stringify({ big: 'x'.repeat(limit) }), { messageId: 'over-1', ...json });
    // Over 6 × the limit without whitespace: refused unparsed.
    rawPublish(JSON.stringify({ big: 'x'.repeat(6 * limit) }), { messageId: 'far-over-1', ...json });

    const dead = await deadLetters(2);
    expect(
      Object.fromEntries(
        dead.map((m) => [
          m.properties.messageId,
          [
            m.properties.headers?.[FERRY_HEADERS.rejectReason],
            String(m.properties.headers?.['x-ferry-reject-detail']),
          ],
        ]),
      ),
    ).toEqual({
      'over-1': ['payload_too_large', expect.stringMatching(/^payload is 1034 bytes; the limit is 1024/)],
      'far-over-1': [
        'payload_too_large',
        expect.stringMatching(/without whitespace between tokens: over 6 × the limit 1024/),
      ],
    });
    await f.expectStoredOnce(['python-1', 'pretty-1']);
  });

  it('writes the identity the consumer used into the dead-letter copy as x-ferry-message-id (review 84)', async () => {
    await attach({ identity: (m) => (m.properties.headers?.['legacy-id'] as string | undefined) ?? null });
    const json = { contentType: 'application/json' };
    rawPublish('{not json', { headers: { 'legacy-id': 'legacy-9' }, ...json });
    rawPublish('{not json', { messageId: 'amqp-9', ...json });
    rawPublish('{not json', {
      messageId: 'ignored',
      headers: { [FERRY_HEADERS.messageId]: 'ferry-9' },
      ...json,
    });

    const dead = await deadLetters(3);
    expect(dead.map((m) => String(m.properties.headers?.[FERRY_HEADERS.messageId])).sort()).toEqual([
      'amqp-9',
      'ferry-9',
      'legacy-9',
    ]);
  });

  it('takes identity from the AMQP messageId, then from the configured extractor', async () => {
    await attach({ identity: (m) => (m.properties.headers?.['legacy-id'] as string | undefined) ?? null });
    rawPublish('{"a":1}', { messageId: 'amqp-id', contentType: 'application/json' });
    rawPublish('{"a":2}', { headers: { 'legacy-id': 'legacy-7' }, contentType: 'application/json' });
    rawPublish('{"a":3}', {
      messageId: 'ignored',
      headers: { [FERRY_HEADERS.messageId]: 'ferry-id' },
      contentType: 'application/json',
    });

    await waitFor('three stored', async () =>
      (await f.acceptor.storedIds()).length === 3 ? true : undefined,
    );
    expect((await f.acceptor.storedIds()).sort()).toEqual(['amqp-id', 'ferry-id', 'legacy-7']);
  });

  it('holds deliveries unacked through a database outage longer than its transport retries, then accepts each once', async () => {
    // The outage outlasts maxTransportRetries x retryBackoff many times over: holding spends no retry.
    await f.acceptor.refuse(true);
    await attach({ maxTransportRetries: 1 });
    const messages = outboxMessages(3, { destination: toQueue() });
    await f.publisher.publish(messages, neverAborted());
    // Deliveries that arrived behind a held batch wait, unacked, in the consumer's buffer.
    await waitFor('one refused four times, all three delivered', async () =>
      messages.some((m) => f.acceptor.seen.filter((id) => id === m.id).length >= 4) &&
      (await f.broker.readyCount(f.queue)) === 0
        ? true
        : undefined,
    );
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
    for (const retryQueue of f.consumer!.names.retryQueues)
      expect(await f.broker.readyCount(retryQueue)).toBe(0);
    expect(await unackedCount(f.queue)).toBe(3);

    await f.acceptor.refuse(false);

    await waitFor('all three stored', async () =>
      (await f.acceptor.storedIds()).length === 3 ? true : undefined,
    );
    expect((await f.acceptor.storedIds()).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(await f.backOnClose()).toBe(0);
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
  });

  it('requeues deliveries held through an outage on close(), without counting a transport attempt', async () => {
    await f.acceptor.refuse(true);
    await attach({ maxTransportRetries: 1 });
    const messages = outboxMessages(2, { destination: toQueue() });
    await f.publisher.publish(messages, neverAborted());
    await waitFor('one refused twice, both delivered', async () =>
      messages.some((m) => f.acceptor.seen.filter((id) => id === m.id).length >= 2) &&
      (await f.broker.readyCount(f.queue)) === 0
        ? true
        : undefined,
    );

    await f.consumer!.close();

    const requeued = await waitFor('both back in the work queue', async () => {
      const ready = await f.broker.readyCount(f.queue);
      return ready === 2 ? f.broker.drain(f.queue) : undefined;
    });
    expect(requeued.map((m) => m.properties.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    for (const m of requeued) expect(m.properties.headers?.[FERRY_HEADERS.transportAttempts]).toBeUndefined();
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
  });

  it('on close() during an outage requeues the batches buffered behind the held one without offering them', async () => {
    await f.acceptor.refuse(true);
    await attach({ prefetch: 4, maxBatchSize: 1 });
    const messages = outboxMessages(4, { destination: toQueue() });
    await f.publisher.publish(messages, neverAborted());
    await waitFor('one batch held, three buffered behind it', async () =>
      messages.some((m) => f.acceptor.seen.filter((id) => id === m.id).length >= 2) &&
      (await f.broker.readyCount(f.queue)) === 0
        ? true
        : undefined,
    );
    // A slow database: each offer would wait for it (here until released).
    f.acceptor.hold();
    const offered = f.acceptor.batches.length;
    const closing = f.consumer!.close();
    await waitFor('the offer in flight, if any, waiting', () =>
      f.acceptor.batches.length - offered <= 1 ? true : undefined,
    );
    f.acceptor.release();
    await closing;
    // At most the held batch's offer in flight when close() came; none for the buffered batches.
    expect(f.acceptor.batches.length - offered).toBeLessThanOrEqual(1);
    await waitFor('all four back in the work queue', async () =>
      (await f.broker.readyCount(f.queue)) === 4 ? true : undefined,
    );
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
  });

  it('sends deliveries whose acceptance keeps failing with a retriable non-outage error round the retry tier queues, then dead-letters them', async () => {
    await attach({
      maxTransportRetries: 2,
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: (inputs) => {
          f.acceptor.seen.push(...inputs.map((i) => i.messageId));
          return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'));
        },
      },
    });
    const messages = outboxMessages(3, { destination: toQueue() });
    await f.publisher.publish(messages, neverAborted());

    const dead = await deadLetters(3);

    expect(dead.map((m) => m.properties.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    for (const m of dead) {
      expect(m.properties.headers).toMatchObject({
        [FERRY_HEADERS.rejectReason]: 'transport_retries_exhausted',
        [FERRY_HEADERS.transportAttempts]: '2',
      });
    }
    expect(await f.acceptor.storedIds()).toEqual([]);
    expect(await f.broker.readyCount(f.queue)).toBe(0);
    for (const retryQueue of f.consumer!.names.retryQueues)
      expect(await f.broker.readyCount(retryQueue)).toBe(0);
  });

  it('accepts a delivery whose acceptance failed once the database takes work again', async () => {
    await f.acceptor.refuse(true);
    await attach({ maxTransportRetries: 50 });
    const messages = outboxMessages(4, { destination: toQueue() });
    await f.publisher.publish(messages, neverAborted());
    // A held batch keeps the deliveries behind it waiting (unacked) in the consumer's buffer.
    await waitFor('refused once, all four delivered', async () =>
      f.acceptor.seen.length > 0 && (await f.broker.readyCount(f.queue)) === 0 ? true : undefined,
    );
    expect(await f.acceptor.storedIds()).toEqual([]);

    await f.acceptor.refuse(false);

    await waitFor('all four stored', async () =>
      (await f.acceptor.storedIds()).length === 4 ? true : undefined,
    );
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
  });

  it('recovers after the broker closes its connection mid-stream and loses nothing', async () => {
    f.acceptor.hold();
    await attach();
    const early = outboxMessages(40, { destination: toQueue() });
    await f.publisher.publish(early, neverAborted());
    await waitFor('a batch in acceptance', () => (f.acceptor.held() > 0 ? true : undefined));

    expect(await closeConnectionsNamed(f.connectionName)).toBe(1);
    f.acceptor.release();
    await waitFor('the connection to come back', () => (f.connection.current !== null ? true : undefined));
    const late = outboxMessages(20, { destination: toQueue() });
    await waitFor('late messages sent', async () => {
      const outcomes = await f.publisher.publish(late, neverAborted());
      return outcomes.every((o) => o.status === 'sent') ? true : undefined;
    });

    const expected = [...early, ...late].map((m) => m.id);
    await waitFor('all sixty stored', async () =>
      (await f.acceptor.storedIds()).length >= expected.length ? true : undefined,
    );
    const stored = await f.acceptor.storedIds();
    expect({
      missing: expected.filter((id) => !stored.includes(id)),
      extra: stored.filter((id) => !expected.includes(id)),
    }).toEqual({ missing: [], extra: [] });
    expect(f.acceptor.seen.length).toBeGreaterThan(expected.length);
    expect(await f.backOnClose()).toBe(0);
  });

  /** A logger that records the messages of the warnings it is given. */
  function recordingLogger(): { logger: pino.Logger; warnings: string[] } {
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      {
        write(line: string) {
          warnings.push((JSON.parse(line) as { msg: string }).msg);
        },
      },
    );
    return { logger, warnings };
  }

  it('re-declares a deleted dead-letter exchange for the copy, without closing the consuming channel', async () => {
    const { logger, warnings } = recordingLogger();
    await attach({ logger });
    const model = f.connection.current;
    // The dead-letter copy of the invalid delivery is for an exchange that no longer exists.
    // Copies go out on their own channel, which declares the topology as it opens (here: at the
    // first copy, after the deletion); a copy published to a missing exchange would close only
    // that channel (404), never the consuming one, which would send every unacked delivery back.
    await f.broker.channel.deleteExchange(`${f.queue}.dlx`);
    rawPublish('{"n":1}', { messageId: 'valid-1', contentType: 'application/json' });
    rawPublish('{not json', { messageId: 'bad-1', contentType: 'application/json' });
    rawPublish('{"n":2}', { messageId: 'valid-2', contentType: 'application/json' });

    const dead = await deadLetters(1);

    expect(warnings).not.toContain('ferry.rabbitmq: consumer channel closed; re-attaching');
    expect(
      dead.map((m) => [m.properties.messageId, m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
    ).toEqual([['bad-1', 'unparseable_body']]);
    expect(await exchangeExists(`${f.queue}.dlx`)).toBe(true);
    const late = outboxMessages(10, { destination: toQueue() });
    expect((await f.publisher.publish(late, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    await f.expectStoredOnce(['valid-1', 'valid-2', ...late.map((m) => m.id)]);
    expect(f.connection.current).toBe(model);
    expect(await f.backOnClose()).toBe(0);
    expect(await f.broker.drain(`${f.queue}.dlq`)).toEqual([]);
    expect(warnings).not.toContain('ferry.rabbitmq: connection lost; reconnecting');
  });

  it('a dead-letter exchange deleted after the copy channel opened: the copy is retried on a new channel that declares it again', async () => {
    const { logger, warnings } = recordingLogger();
    await attach({ logger, retryBackoff: { initialMs: 50, maxMs: 100 } });
    rawPublish('{not json', { messageId: 'bad-1', contentType: 'application/json' });
    expect((await deadLetters(1)).map((m) => m.properties.messageId)).toEqual(['bad-1']);

    // The copy channel is open now: the next copy goes to the deleted exchange and the broker
    // closes that channel (404). The delivery stays unacked, is requeued after the backoff, and
    // its next copy goes out on a new channel, which declared the topology again as it opened.
    await f.broker.channel.deleteExchange(`${f.queue}.dlx`);
    rawPublish('{not json', { messageId: 'bad-2', contentType: 'application/json' });
    rawPublish('{"n":3}', { messageId: 'valid-3', contentType: 'application/json' });
    expect((await deadLetters(1)).map((m) => m.properties.messageId)).toEqual(['bad-2']);
    await f.expectStoredOnce(['valid-3']);
    expect(warnings).toContain('ferry.rabbitmq: copy channel error');
    expect(warnings).not.toContain('ferry.rabbitmq: consumer channel closed; re-attaching');
    expect(await f.backOnClose()).toBe(0);
  });

  it('consumes again on the same connection after the broker cancelled it (work queue deleted)', async () => {
    const { logger, warnings } = recordingLogger();
    const events: { type: string; error?: string }[] = [];
    await attach({ logger, observer: (event) => events.push(event) });
    const model = f.connection.current;
    const early = outboxMessages(10, { destination: toQueue() });
    await f.publisher.publish(early, neverAborted());
    await f.expectStoredOnce(early.map((m) => m.id));
    await waitFor('every early delivery acked', async () =>
      (await unackedCount(f.queue)) === 0 ? true : undefined,
    );

    await f.broker.channel.deleteQueue(f.queue);

    await waitFor('the work queue re-declared with its consumer', async () =>
      (await consumerCount(f.queue)) === 1 ? true : undefined,
    );
    expect(warnings).toContain('ferry.rabbitmq: consumer channel closed; re-attaching');
    // What an operator reads (the event, check()'s error until re-attached) names the cancel,
    // not a bare "channel closed".
    expect(events.filter((event) => event.type === 'disconnected').map((event) => event.error)).toEqual([
      expect.stringContaining(
        `RabbitMQ cancelled the consumer of queue ${f.queue} (the queue was deleted, or its node went away)`,
      ),
    ]);
    const late = outboxMessages(10, { destination: toQueue() });
    expect((await f.publisher.publish(late, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    await f.expectStoredOnce([...early, ...late].map((m) => m.id));
    expect(f.connection.current).toBe(model);
    expect(await f.backOnClose()).toBe(0);
  });
});
