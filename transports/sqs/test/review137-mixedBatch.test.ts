/**
 * Review 137: a received batch of 10 with every outcome (accepted, duplicate, answered invalid,
 * acceptance failed alone) whose dead-letter copies SQS does not answer, and close() meanwhile.
 * Review 133 deletes the accepted and duplicate messages before those copies are made, but
 * reported them (`accepted`, `settled`) only after the copies: up to their 30 s deadline later,
 * and never once close() gave up on the batch during the copies (its events end with close()),
 * though they were accepted and deleted. Nothing is lost: the refused messages stay in the queue.
 */
import { expect, it, jest } from '@jest/globals';
import type { InboxAcceptInput, InboxAcceptResult } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { heldMessages, waitFor } from './support/sqs';
import { withSilentDeadLetterQueue } from './support/silentDeadLetter';
import { useSqsQueuesFixture } from './support/queuesFixture';

failOnUnhandledRejections();
jest.setTimeout(30_000);

const fixture = useSqsQueuesFixture();

/** Answers by the payload's `k`: ok, dup (a duplicate), bad (invalid), boom (its acceptance throws). */
const acceptor = {
  maxPayloadBytes: 256 * 1024,
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    const kinds = inputs.map((input) => (input.payload as { k: string }).k);
    if (kinds.includes('boom')) throw new Error('a row PostgreSQL refuses');
    return inputs.map((input, index): InboxAcceptResult => {
      if (kinds[index] === 'dup') return { kind: 'duplicate', record: {} } as unknown as InboxAcceptResult;
      if (kinds[index] === 'bad')
        return { kind: 'invalid', code: 'FERRY_VALIDATION_FAILED', reason: 'refused' };
      return { kind: 'accepted', id: input.messageId } as InboxAcceptResult;
    });
  },
};

const sum = (events: readonly TransportConsumerEvent[], type: 'accepted' | 'settled'): number =>
  events.reduce((n, e) => n + (e.type === type ? e.count : 0), 0);

it('reports the accepted and duplicate messages of a mixed batch once deleted, before the dead-letter copies of the others; close() loses none', async () => {
  const kinds = ['ok', 'bad', 'ok', 'dup', 'boom', 'ok', 'bad', 'dup', 'boom', 'ok'];
  const bodies = kinds.map((k, index) => JSON.stringify({ k, index }));
  const options = { visibilityTimeoutSeconds: 60, closeTimeoutMs: 300 };
  await withSilentDeadLetterQueue(
    fixture,
    acceptor,
    bodies,
    options,
    async ({ consumer, events, queueUrl }) => {
      // The accepted and duplicate ones deleted: the four refused stay, their copies unanswered.
      await waitFor('the accepted and duplicate messages deleted', async () =>
        (await heldMessages(fixture.connection, queueUrl)) === 4 ? true : undefined,
      );
      await consumer.close();
      expect([sum(events, 'accepted'), sum(events, 'settled')]).toEqual([6, 6]);
      expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
      expect(await heldMessages(fixture.connection, queueUrl)).toBe(4);
    },
  );
});
