import {
  InboxAdmissionRejectedError,
  type InboxAcceptInput,
  type InboxAcceptor,
  type InboxAcceptResult,
} from '@ferry/core';
import {
  acceptIsolated,
  deadLetterTenant,
  eventLoopTurns,
  invalidResultReason,
  type ConsumerEmit,
  type TenantSource,
} from '@ferry/core/transport';
import type { ConsumedRecord, DriverProducer } from './client/types';
import { sendDeadLetters, type DeadLetter } from './deadLetter';
import { REJECT_REASONS, transportError } from './errors';
import type { ResolvedConsumerOptions } from './options';
import { decodeRecord, isTombstone, type InboundRecord } from './wire';

/** What failed when a chunk is not done: the inbox (batch-wide) or the dead-letter topic. */
export type ChunkStage = 'inbox acceptance' | 'dead-letter send';

/**
 * A chunk is done (`accepted`: the records the inbox accepted or knew as duplicates; the rest
 * were dead-lettered or skipped), or not, and nothing of it may be committed.
 */
export type ChunkOutcome =
  | { readonly done: true; readonly accepted: number }
  | { readonly done: false; readonly stage: ChunkStage; readonly error: unknown }
  /**
   * The admission limit refused records: the chunk is done before index `refusedAt` (the
   * first refused record; `accepted` counts the accepted and duplicates before it), which may
   * be committed; from `refusedAt` on it is read again later (`refused` records were refused;
   * the answered ones after the first refused are answered again, as duplicates).
   */
  | {
      readonly done: 'partly';
      readonly accepted: number;
      readonly refusedAt: number;
      readonly refused: number;
      readonly error: InboxAdmissionRejectedError;
    };

export interface ChunkContext {
  readonly inbox: InboxAcceptor;
  readonly options: ResolvedConsumerOptions;
  readonly producer: DriverProducer;
  readonly emit: ConsumerEmit;
}

interface Sorted {
  readonly inputs: InboxAcceptInput[];
  readonly inputMessages: ConsumedRecord[];
  readonly deadLetters: DeadLetter[];
}

/**
 * Handles one chunk of a partition: every record ends accepted, duplicate, dead-lettered or
 * skipped, or the chunk is not done and nothing of it may be committed.
 */
export async function handleChunk(
  context: ChunkContext,
  topic: string,
  partition: number,
  chunk: readonly ConsumedRecord[],
  heartbeat: () => Promise<void>,
): Promise<ChunkOutcome> {
  const sorted = await sortChunk(context, topic, partition, chunk, heartbeat);
  const { inputs } = sorted;
  let results: readonly InboxAcceptResult[];
  try {
    // One bad record cannot fail its chunk: a failure that is not batch-wide is bisected down to
    // the records that fail alone, which come back as `invalid` and are dead-lettered.
    results = await acceptIsolated(inputs, (batch) => context.inbox.acceptMany(batch));
  } catch (error) {
    if (
      error instanceof InboxAdmissionRejectedError &&
      error.results.length === inputs.length &&
      error.results.some((result) => result.kind === 'refused')
    ) {
      return settleBeforeRefused(context, topic, partition, chunk, sorted, error);
    }
    return { done: false, stage: 'inbox acceptance', error };
  }
  return settleAnswered(context, topic, partition, sorted, results);
}

/**
 * At the admission limit: settles the records before the first refused one (offsets are
 * contiguous, nothing after it may be committed) and hands back where the chunk is re-read.
 */
async function settleBeforeRefused(
  context: ChunkContext,
  topic: string,
  partition: number,
  chunk: readonly ConsumedRecord[],
  sorted: Sorted,
  error: InboxAdmissionRejectedError,
): Promise<ChunkOutcome> {
  const first = error.results.findIndex((result) => result.kind === 'refused');
  const refusedRecord = sorted.inputMessages[first]!;
  const before = (message: ConsumedRecord) => BigInt(message.offset) < BigInt(refusedRecord.offset);
  const answered = error.results.slice(0, first) as InboxAcceptResult[];
  const prefix: Sorted = {
    inputs: sorted.inputs.slice(0, first),
    inputMessages: sorted.inputMessages.slice(0, first),
    deadLetters: sorted.deadLetters.filter((deadLetter) => before(deadLetter.message)),
  };
  const settled = await settleAnswered(context, topic, partition, prefix, answered);
  if (settled.done !== true) return settled;
  const refused = error.results.filter((result) => result.kind === 'refused').length;
  const refusedAt = chunk.indexOf(refusedRecord);
  return { done: 'partly', accepted: settled.accepted, refusedAt, refused, error };
}

/** Dead-letters what was rejected before or by the inbox; done once the dead letters are sent. */
async function settleAnswered(
  context: ChunkContext,
  topic: string,
  partition: number,
  sorted: Sorted,
  results: readonly InboxAcceptResult[],
): Promise<ChunkOutcome> {
  const { inputs, inputMessages, deadLetters } = sorted;
  deadLetters.push(...rejectedByInbox(results, inputs, inputMessages, context.options.tenant));
  // In source-offset order, whether rejected before acceptance or by the inbox.
  deadLetters.sort((a, b) => Number(BigInt(a.message.offset) - BigInt(b.message.offset)));
  if (deadLetters.length > 0) {
    try {
      const deadLetterTopic = context.options.deadLetterTopic(topic);
      await sendDeadLetters(context.producer, deadLetterTopic, { topic, partition }, deadLetters, {
        emit: context.emit,
        logger: context.options.logger,
      });
    } catch (error) {
      return {
        done: false,
        stage: 'dead-letter send',
        error: transportError('producing to the dead-letter topic failed', error),
      };
    }
  }
  const accepted = results.filter((result) => result.kind === 'accepted' || result.kind === 'duplicate');
  return { done: true, accepted: accepted.length };
}

/** Dead letters for the records the inbox answered `invalid` or `conflict`. */
function rejectedByInbox(
  results: readonly InboxAcceptResult[],
  inputs: readonly InboxAcceptInput[],
  messages: readonly ConsumedRecord[],
  source: TenantSource<InboundRecord>,
): DeadLetter[] {
  const deadLetters: DeadLetter[] = [];
  results.forEach((result, index) => {
    const message = messages[index]!;
    const { messageId, tenantId } = inputs[index]!;
    const tenant = deadLetterTenant(source, tenantId);
    if (result.kind === 'invalid') {
      const detail = `${result.code}: ${result.reason}`;
      deadLetters.push({ message, messageId, tenant, reason: invalidResultReason(result), detail });
    } else if (result.kind === 'conflict') {
      const reason = REJECT_REASONS.fingerprintConflict;
      deadLetters.push({ message, messageId, tenant, reason, detail: result.reason });
    }
  });
  return deadLetters;
}

/**
 * Decodes every record: inputs for the inbox and dead letters; tombstones to skip are left out.
 * A record within 6 × maxPayloadBytes is parsed before it is measured, and one compressed batch
 * holds hundreds of them (review 88): the chunk gives the event loop its turns while it is
 * decoded, as every consumer does (core eventLoopTurns), and at each turn `heartbeat()` (kafkajs
 * heartbeats only when asked, at most once per heartbeatIntervalMs; @platformatic/kafka on its
 * own timer). A heartbeat refused here (a rebalance) is not this chunk's failure: its commit is
 * refused as stale.
 */
async function sortChunk(
  context: ChunkContext,
  topic: string,
  partition: number,
  chunk: readonly ConsumedRecord[],
  heartbeat: () => Promise<void>,
): Promise<Sorted> {
  const sorted: Sorted = { inputs: [], inputMessages: [], deadLetters: [] };
  const { options, inbox } = context;
  const turns = eventLoopTurns();
  for (const message of chunk) {
    const turn = turns();
    if (turn !== undefined) {
      await turn;
      heartbeat().catch(() => undefined);
    }
    // A skipped tombstone is committed with its chunk, reported only in `settled`.
    if (options.tombstones === 'skip' && isTombstone(message)) continue;
    const decoded = decodeRecord(topic, partition, message, {
      consumer: options.consumer,
      maxPayloadBytes: inbox.maxPayloadBytes,
      identity: options.identity,
      tenant: options.tenant,
    });
    if (decoded.ok) {
      sorted.inputs.push(decoded.input);
      sorted.inputMessages.push(message);
    } else {
      const { messageId, reason, detail } = decoded;
      const tenant = deadLetterTenant(options.tenant, decoded.tenantId);
      sorted.deadLetters.push({ message, messageId, tenant, reason, detail });
    }
  }
  return sorted;
}
