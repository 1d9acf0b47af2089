import { FERRY_HEADERS, FerryError, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { throwingLogger } from '../../../test-support/throwingLogger';

/** A MemoryAcceptor that keeps every input it was offered. */
class RecordingAcceptor extends MemoryAcceptor {
  readonly inputs: InboxAcceptInput[] = [];
  override acceptMany(inputs: readonly InboxAcceptInput[]) {
    this.inputs.push(...inputs);
    return super.acceptMany(inputs);
  }
}

failOnUnhandledRejections();

describe('attachInMemoryConsumer', () => {
  test('Review finding (failed first): refuses at attach a fixed tenant acceptance refuses (too long, a NUL)', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    for (const fixed of ['x'.repeat(256), 'acme\u0000']) {
      const attach = () =>
        attachInMemoryConsumer(new RecordingAcceptor(), {
          broker,
          queue: 'q',
          consumer: 'c',
          tenant: { fixed },
        });
      expect(attach).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'tenant.fixed' }),
      );
    }
  });

  test('leaves out a header whose name or value is not storable text and accepts its delivery and the neighbours', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const good = { 'x-app': 'kept' };
    const sent: Array<[string, Record<string, string>]> = [
      ['good-1', good],
      ['value-nul', { ...good, 'x-bin': 'a\u0000b' }],
      ['value-lone', { ...good, 'x-lone': '\ud800' }],
      ['name-nul', { ...good, 'x-\u0000name': 'value' }],
      ['good-2', good],
    ];
    for (const [id, headers] of sent) {
      broker.send('q', { body: Buffer.from('{}'), headers: { [FERRY_HEADERS.messageId]: id, ...headers } });
    }
    const acceptor = new RecordingAcceptor();
    const consumer = attachInMemoryConsumer(acceptor, { broker, queue: 'q', consumer: 'c' });
    try {
      await waitUntil('every delivery accepted', () => acceptor.accepted.length === sent.length);
    } finally {
      await consumer.close();
    }
    expect(acceptor.inputs.map((input) => [input.messageId, input.headers])).toEqual(
      sent.map(([id]) => [id, { [FERRY_HEADERS.messageId]: id, ...good }]),
    );
  });

  test('dead-letters a body that is not valid UTF-8 instead of accepting replacement characters', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const invalid = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    broker.send('q', { body: invalid, headers: { [FERRY_HEADERS.messageId]: 'bad-utf8' } });
    broker.send('q', { body: Buffer.from('{"a":"ü"}'), headers: { [FERRY_HEADERS.messageId]: 'good' } });
    const acceptor = new RecordingAcceptor();
    const consumer = attachInMemoryConsumer(acceptor, { broker, queue: 'q', consumer: 'c' });
    try {
      await waitUntil('one accepted, one dead-lettered', () =>
        acceptor.accepted.length === 1 && broker.deadLetters('q').length === 1 ? true : undefined,
      );
    } finally {
      await consumer.close();
    }
    expect(acceptor.accepted).toEqual(['good']);
    expect(broker.deadLetters('q').map(({ reason }) => reason)).toEqual(['unparseable_body']);
  });

  test('with a logger that throws, deliveries held while acceptance is unavailable are still accepted', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    for (const id of ['held-1', 'held-2']) {
      broker.send('q', { body: Buffer.from('{}'), headers: { [FERRY_HEADERS.messageId]: id } });
    }
    const acceptor = new RecordingAcceptor();
    acceptor.failNext(2);
    const { logger, calls } = throwingLogger();
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      logger,
      retryBackoff: { initialMs: 1, maxMs: 5 },
    });
    try {
      await waitUntil('both deliveries accepted', () => acceptor.accepted.length === 2);
    } finally {
      await consumer.close();
    }
    // The lines were attempted (held, then recovered) and lost; the deliveries were not.
    expect(calls()).toBeGreaterThanOrEqual(2);
    expect(acceptor.accepted).toEqual(['held-1', 'held-2']);
  });

  test('dead-letters a delivery after maxTransportRetries trips back to the queue, with the last error', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    broker.send('q', { body: Buffer.from('{}'), headers: { [FERRY_HEADERS.messageId]: 'refused' } });
    let calls = 0;
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: async () => {
        calls += 1;
        throw new FerryError('FERRY_DATABASE_ERROR', `refused ${calls}`);
      },
    };
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      maxTransportRetries: 2,
      retryBackoff: { initialMs: 1, maxMs: 5 },
    });
    try {
      await waitUntil('a dead letter', () => broker.deadLetters('q').length > 0, { timeoutMs: 10_000 });
    } finally {
      await consumer.close();
    }
    expect(broker.deadLetters('q').map(({ reason, detail }) => ({ reason, detail }))).toEqual([
      {
        reason: 'transport_retries_exhausted',
        detail: expect.stringMatching(/^after 2 transport retries: .*refused 3/),
      },
    ]);
    expect({ calls, held: broker.held('q') }).toEqual({ calls: 3, held: 0 });
  });
});
