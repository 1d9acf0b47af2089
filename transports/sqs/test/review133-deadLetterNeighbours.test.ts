/**
 * Review 133: the neighbours of an invalid message in one received batch stay invisible, or are
 * deleted, while its dead-letter copy is made. A copy SQS was slow to answer (a dead-letter queue
 * behind a silent network, a large copy over a slow uplink) takes up to the visibility timeout,
 * and meanwhile the valid messages of the batch became visible and went to another consumer (a
 * receive count spent; past the redrive policy's maxReceiveCount moved unoffered): those invalid
 * before acceptance were dead-lettered before the acceptance of the others began, whose
 * visibility was renewed during their acceptance only; and the accepted neighbours of a message
 * the inbox answered invalid were deleted only once its copy was answered.
 */
import { expect, it, jest } from '@jest/globals';
import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { InboxAcceptor } from '@ferry/core';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { waitFor } from './support/sqs';
import { withSilentDeadLetterQueue } from './support/silentDeadLetter';
import { useSqsQueuesFixture } from './support/queuesFixture';

jest.setTimeout(60_000);

const VISIBILITY_SECONDS = 3;

const fixture = useSqsQueuesFixture();

/**
 * Sends `bodies` as one batch to a fresh queue, attaches a consumer of `acceptor` whose
 * dead-letter queue goes silent once checked at attach, and returns what another consumer of the
 * queue receives meanwhile, once the consumer accepted `accepted` messages.
 */
async function receivedByAnother(
  acceptor: InboxAcceptor & { readonly accepted: readonly unknown[] },
  bodies: readonly string[],
  accepted: number,
): Promise<(string | undefined)[]> {
  const options = { visibilityTimeoutSeconds: VISIBILITY_SECONDS, extendEveryMs: 1_000 };
  return withSilentDeadLetterQueue(fixture, acceptor, bodies, options, async ({ queueUrl }) => {
    // Another consumer of the queue, polling while the copy goes unanswered.
    const other: Message[] = [];
    const until = Date.now() + (VISIBILITY_SECONDS + 3) * 1000;
    while (Date.now() < until) {
      const output = await fixture.connection.client.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      other.push(...(output.Messages ?? []));
    }
    await waitFor('the valid messages accepted', () =>
      acceptor.accepted.length === accepted ? true : undefined,
    );
    return other.map((m) => m.Body);
  });
}

it('keeps the valid neighbours invisible while the dead-letter copy of a message invalid before acceptance goes unanswered', async () => {
  const other = await receivedByAnother(traceRecordingAcceptor(), ['not json', '{"n":1}'], 1);
  expect(other).not.toContain('{"n":1}');
});

it('deletes the accepted neighbours of a message the inbox answered invalid before its dead-letter copy is answered', async () => {
  const inner = traceRecordingAcceptor();
  // The inbox takes 1.5 s, and answers {"bad":true} invalid.
  const acceptor = {
    maxPayloadBytes: inner.maxPayloadBytes,
    accepted: inner.accepted,
    async acceptMany(inputs: Parameters<InboxAcceptor['acceptMany']>[0]) {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const results = await inner.acceptMany(inputs);
      return results.map((result, index) =>
        (inputs[index]!.payload as { bad?: boolean }).bad
          ? { kind: 'invalid' as const, code: 'FERRY_VALIDATION_FAILED' as const, reason: 'refused' }
          : result,
      );
    },
  };
  const other = await receivedByAnother(acceptor, ['{"bad":true}', '{"n":1}'], 2);
  expect(other).not.toContain('{"n":1}');
});
