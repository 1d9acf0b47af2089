/**
 * A content type naming a charset other than UTF-8: ferry reads every body as UTF-8, so a body the
 * producer declared ISO-8859-1 (or UTF-16) whose bytes happen to be valid UTF-8 was accepted with
 * other text than the producer sent (`Ã©` in Latin-1 is the bytes of `é` in UTF-8). It is
 * dead-lettered `unsupported_content_type` instead; a UTF-8 charset, in any spelling, is accepted.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('RabbitMQ consumer: the charset of the content type', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));

  it('dead-letters a body declared in a charset other than UTF-8 and accepts UTF-8 in any spelling', async () => {
    await f.attach();
    const send = (messageId: string, body: Buffer, contentType: string) =>
      f.broker.channel.sendToQueue(f.queue, body, { messageId, contentType });
    // Latin-1 `Ã©` is C3 A9: valid UTF-8 for `é`, which the producer never sent.
    send('latin1', Buffer.from('{"name":"Ã©"}', 'latin1'), 'application/json; charset=iso-8859-1');
    send('latin1-quoted', Buffer.from('{"name":"Ã©"}', 'latin1'), 'application/json;charset="Latin1"');
    send('ascii', Buffer.from('{"name":"a"}'), 'application/json; charset=us-ascii');
    send('utf8', Buffer.from('{"name":"é"}'), 'application/json; charset=utf-8');
    send('utf8-upper-quoted', Buffer.from('{"name":"é"}'), 'application/json; Charset="UTF-8"');
    send('utf8-bare', Buffer.from('{"name":"é"}'), 'application/json; charset=utf8');
    send('other-param', Buffer.from('{"name":"é"}'), 'application/json; version=2');

    const dead: GetMessage[] = [];
    await waitFor('all 7 settled (stored or dead-lettered)', async () => {
      dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      const stored = (await f.acceptor.storedIds()).length;
      return dead.length + stored >= 7 && (await unackedCount(f.queue)) === 0 ? true : undefined;
    });
    expect(
      Object.fromEntries(
        dead.map((m) => [
          m.properties.messageId,
          [
            m.properties.headers?.[FERRY_HEADERS.rejectReason],
            m.properties.headers?.['x-ferry-reject-detail'],
          ],
        ]),
      ),
    ).toEqual({
      latin1: ['unsupported_content_type', 'charset iso-8859-1 is not accepted: ferry reads bodies as UTF-8'],
      'latin1-quoted': [
        'unsupported_content_type',
        'charset latin1 is not accepted: ferry reads bodies as UTF-8',
      ],
      ascii: ['unsupported_content_type', 'charset us-ascii is not accepted: ferry reads bodies as UTF-8'],
    });
    await f.expectStoredOnce(['utf8', 'utf8-upper-quoted', 'utf8-bare', 'other-param']);
  });

  // Review 87 (failed first): a content type of parameters alone (no media type) was taken as no
  // content type (acceptMissingContentType) and its charset never read: a body declared Latin-1
  // was accepted as UTF-8, with other text than the producer sent.
  it('reads the charset of a content type without a media type too', async () => {
    await f.attach();
    const latin1 = Buffer.from('{"name":"Ã©"}', 'latin1');
    f.broker.channel.sendToQueue(f.queue, latin1, {
      messageId: 'no-media',
      contentType: '; charset=iso-8859-1',
    });
    f.broker.channel.sendToQueue(f.queue, latin1, {
      messageId: 'blank-media',
      contentType: ' ;charset=latin1',
    });
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"name":"é"}'), {
      messageId: 'no-media-utf8',
      contentType: ';charset=UTF-8',
    });
    const dead: GetMessage[] = [];
    await waitFor('all 3 settled (stored or dead-lettered)', async () => {
      dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      const stored = (await f.acceptor.storedIds()).length;
      return dead.length + stored >= 3 && (await unackedCount(f.queue)) === 0 ? true : undefined;
    });
    expect(
      Object.fromEntries(
        dead.map((m) => [m.properties.messageId, m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
      ),
    ).toEqual({ 'no-media': 'unsupported_content_type', 'blank-media': 'unsupported_content_type' });
    await f.expectStoredOnce(['no-media-utf8']);
  });
});
