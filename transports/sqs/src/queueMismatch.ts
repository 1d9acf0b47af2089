import { stripUrlCredentials } from '@ferry/core/transport';
import type { QueueAttributeName } from '@aws-sdk/client-sqs';
import { FerryConfigError } from '@ferry/core';

/** One attribute an existing queue has other than a declareQueue spec asks. */
export interface QueueAttributeDifference {
  readonly attribute: string;
  /** Null when the queue does not have it. */
  readonly existing: string | null;
  readonly requested: string;
}

/** The QueueSpec key of each attribute declareQueue sets. */
const SPEC_OPTION: Readonly<Record<string, string>> = {
  VisibilityTimeout: 'visibilityTimeoutSeconds',
  RedrivePolicy: 'deadLetter.maxReceiveCount',
  FifoQueue: 'fifo',
};

/**
 * declareQueue found the queue already there with other attributes (SQS's QueueNameExists):
 * retrying cannot help, since CreateQueue never changes an existing queue. `option` is the spec
 * key of the first difference, `differences` names each one with both values.
 */
export class QueueAttributesMismatchError extends FerryConfigError {
  readonly queue: string;
  readonly differences: readonly QueueAttributeDifference[];
  constructor(queue: string, differences: readonly QueueAttributeDifference[]) {
    const found =
      differences.length === 0
        ? 'SQS refused the attributes, and none of them reads back differently'
        : differences
            .map((d) => `${d.attribute} is ${d.existing ?? 'not set'}, the spec asks ${d.requested}`)
            .join('; ');
    super(
      SPEC_OPTION[differences[0]?.attribute ?? ''] ?? 'name',
      `queue ${stripUrlCredentials(queue)} exists with other attributes: ${found}. CreateQueue does not change an existing queue: change it with SetQueueAttributes, or delete it and declare it again`,
    );
    this.queue = queue;
    this.differences = differences;
  }
}

/** The requested attributes whose value the existing queue does not have (RedrivePolicy compared as a policy). */
export function queueAttributeDifferences(
  requested: Partial<Record<QueueAttributeName, string>>,
  existing: Partial<Record<QueueAttributeName, string>>,
): QueueAttributeDifference[] {
  const differences: QueueAttributeDifference[] = [];
  for (const [name, value] of Object.entries(requested) as [QueueAttributeName, string][]) {
    const current = existing[name];
    const same = name === 'RedrivePolicy' ? samePolicy(current, value) : current === value;
    if (!same) differences.push({ attribute: name, existing: current ?? null, requested: value });
  }
  return differences;
}

/** Same target and maxReceiveCount (SQS may answer the count as a number or a string). */
function samePolicy(current: string | undefined, requested: string): boolean {
  const read = (text: string | undefined) => {
    try {
      const policy = JSON.parse(text ?? '') as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
      return `${String(policy.deadLetterTargetArn)} ${String(policy.maxReceiveCount)}`;
    } catch {
      return null;
    }
  };
  const existing = read(current);
  return existing !== null && existing === read(requested);
}
