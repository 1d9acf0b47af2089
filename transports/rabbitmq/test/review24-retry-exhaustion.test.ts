/**
 * Review finding (failed first), review 24 of 21dbc40: a retry copy that cannot carry all of the delivery's headers
 * is not made; the delivery is requeued after the backoff and the trip is not counted against
 * maxTransportRetries. Attack: a delivery whose acceptance keeps failing retriably.
 */
import { FERRY_HEADERS, FerryError, type InboxAcceptInput } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { tableBytes } from '../src/headerTable';
import { uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review24: a delivery whose retry copy cannot carry its headers, acceptance failing for good', () => {
  const f = useConsumerFixture(() => ({ prefetch: 10 }));

  // What a user (or a hostile producer) does: a producer sends a message with a large header table
  // (65,476 bytes, which amqplib itself still encodes: any client can send it, up to 128 KiB), and
  // the acceptance of that message keeps failing with a retriable, non-outage error
  // (FERRY_DATABASE_ERROR: "a database error of unknown cause", e.g. a row PostgreSQL refuses for
  // good with an error ferry cannot classify).
  // Contract (README, consumer outcome table): such a delivery goes round the retry tiers and
  // "after `maxTransportRetries` trips it is dead-lettered (`transport_retries_exhausted`)"; the
  // standard: hostile input gets a dead-letter with a reason and never stalls for ever.
  // What happens: the retry copy would leave a header out, so no copy is made and the delivery is
  // requeued after backoff(1) without its attempt counter moving: it is offered again and again,
  // for ever (well past maxTransportRetries), and never dead-lettered.
  it('dead-letters it (headers_too_large) instead of requeueing it for ever', async () => {
    const offers: string[] = [];
    await f.attach({
      maxTransportRetries: 2,
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: (inputs: readonly InboxAcceptInput[]) => {
          offers.push(...inputs.map((i) => i.messageId));
          return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'));
        },
      },
    });
    const messageId = uniqueName('m');
    const big = { tenant: 'acme', token: '' };
    big.token = 'x'.repeat(65_536 - 60 - tableBytes({ 'x-claims': big }));
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"total":42}'), {
      messageId,
      contentType: 'application/json',
      headers: { 'x-claims': big },
    });

    const dead: GetMessage[] = [];
    // Either it is dead-lettered, or it was offered many times over the limit (1 + 2 trips = 3).
    await waitFor(
      'dead-lettered, or offered 12 times',
      async () => {
        dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
        return dead.length > 0 || offers.length >= 12 ? true : undefined;
      },
      60_000,
    );
    // Fails on HEAD: { dead: 0, offers: 12 } (requeued for ever, never dead-lettered).
    expect({ dead: dead.length, offersOverLimit: offers.length > 3 }).toEqual({
      dead: 1,
      offersOverLimit: false,
    });
    expect(dead[0]!.properties.headers).toMatchObject({
      // Dead-lettered at its first failed acceptance: it cannot go round the tiers faithfully.
      [FERRY_HEADERS.rejectReason]: 'headers_too_large',
    });
  }, 90_000);
});
