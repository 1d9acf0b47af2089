/**
 * Review 98 (review 97's class, the caller's side): a publish waiting for the connection when the
 * publisher closes, the peer accepting TCP and never answering the handshake, is answered at once:
 * not sent and not the message's fault (never permanent, which would fail the event for good;
 * `unavailable`, as a closed publisher answers: no attempt spent). The Kafka and SQS publishers answer the same
 * (review98-closeWhileConnecting.test.ts in their packages).
 */
import { expect, it } from '@jest/globals';
import pino from 'pino';
import { RabbitPublisher } from '../src';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { testOutboxMessage } from '../../../test-support/outboxMessages';
import { useSilentPeer } from '../../../test-support/silentPeer';
import { waitFor } from './support/broker';

failOnUnhandledRejections();

const peer = useSilentPeer();
/** Far beyond any wait of this test. */
const CONNECT_TIMEOUT_MS = 600_000;
const CLOSE_WITHIN_MS = 10_000;

it('a publish waiting for the handshake when the publisher closes is answered at once, not sent and unavailable', async () => {
  const before = openSocketsTo(peer.port);
  const publisher = new RabbitPublisher({
    url: `amqp://guest:guest@127.0.0.1:${peer.port}`,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    logger: pino({ level: 'silent' }),
  });
  const publishing = outcomeWithin(
    publisher.publish(
      [testOutboxMessage({ type: 'doc.stored', destination: 'review98', payload: { n: 1 } })],
      new AbortController().signal,
    ),
    CLOSE_WITHIN_MS,
  );
  await waitFor('the connect attempt to reach the peer', async () =>
    peer.sockets.size > 0 ? true : undefined,
  );
  expect(await outcomeWithin(publisher.close(), CLOSE_WITHIN_MS)).toEqual({ value: undefined });
  const outcome = await publishing;
  const statuses =
    typeof outcome === 'object' && 'value' in outcome ? outcome.value.map((o) => o.status) : outcome;
  // Ended by close(), not by the relay: the broker out of reach, no attempt spent.
  expect(statuses).toEqual(['unavailable']);
  expect(openSocketsTo(peer.port)).toBe(before);
}, 60_000);
