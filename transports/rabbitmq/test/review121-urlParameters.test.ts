/**
 * Review 121: the query parameters amqplib reads from a URL (`heartbeat`, `channelMax`,
 * `frameMax`). ferry replaced the URL's `heartbeat` with `heartbeatSeconds` (default 10) without a
 * word: `amqp://host?heartbeat=30` ran with 10, `?heartbeat=0` with 10 too. A `channelMax=1` left
 * the consumer its consuming channel and no channel for its dead-letter and retry copies: every
 * delivery to dead-letter was requeued for ever, one error event per retry backoff. A value
 * amqplib cannot use (`frameMax=abc`, `frameMax=100`: below AMQP's 4096) failed every connect.
 */
import type { ChannelModel } from 'amqplib';
import { FerryConfigError } from '@ferry/core';
import { RabbitConnection, attachRabbitConsumer } from '@ferry/rabbitmq';
import { AMQP_URL, uniqueName } from './support/broker';

type Tuned = ChannelModel & { connection: { heartbeat: number } };

async function negotiatedHeartbeat(connection: RabbitConnection): Promise<number> {
  try {
    await connection.connect();
    return (connection.current as Tuned).connection.heartbeat;
  } finally {
    await connection.close();
  }
}

const named = (url: string, heartbeatSeconds?: number) =>
  new RabbitConnection({
    url,
    connectionName: uniqueName('review121-url'),
    ...(heartbeatSeconds === undefined ? {} : { heartbeatSeconds }),
  });

test("Review finding (failed first): the URL's heartbeat query parameter is honoured", async () => {
  expect(await negotiatedHeartbeat(named(`${AMQP_URL}?heartbeat=30`))).toBe(30);
  expect(await negotiatedHeartbeat(named(`${AMQP_URL}/%2F?heartbeat=7&locale=en_US`))).toBe(7);
  // The same value in both places is no conflict.
  expect(await negotiatedHeartbeat(named(`${AMQP_URL}?heartbeat=5`, 5))).toBe(5);
  // Neither: the default, as before.
  expect(await negotiatedHeartbeat(named(AMQP_URL))).toBe(10);
});

function refused(make: () => unknown): FerryConfigError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(FerryConfigError);
    return error as FerryConfigError;
  }
  throw new Error('not refused');
}

test('Review finding (failed first): URL parameters ferry cannot run with are refused at configuration', () => {
  const url = 'amqp://guest:secret@127.0.0.1:1';
  const conflict = refused(() => new RabbitConnection({ url: `${url}?heartbeat=30`, heartbeatSeconds: 5 }));
  expect(conflict.message).toMatch(/heartbeatSeconds/);
  expect(conflict.message).toMatch(/heartbeat=30/);
  for (const query of [
    'heartbeat=abc',
    'heartbeat=-1',
    'channelMax=1',
    'channelMax=x',
    'frameMax=100',
    'frameMax=1e5',
  ]) {
    const error = refused(() => new RabbitConnection({ url: `${url}?${query}` }));
    expect(error.message).toContain(query.split('=')[0]!);
    expect(error.message).not.toContain('secret');
  }
  // A consumer's own connection is checked the same way, under `connection.`.
  const inbox = { maxPayloadBytes: 1024, acceptMany: async () => [] };
  const consumer = refused(() =>
    attachRabbitConsumer(inbox, { connection: `${url}?channelMax=1`, queue: 'q', consumer: 'c' }),
  );
  expect(consumer.message).toMatch(/channelMax/);
  // What amqplib and ferry can run with is taken, an unknown parameter too (amqplib ignores it).
  for (const query of ['channelMax=0', 'channelMax=2', 'frameMax=0', 'frameMax=4096', 'bogus=1'])
    expect(() => new RabbitConnection({ url: `${url}?${query}` })).not.toThrow();
});
