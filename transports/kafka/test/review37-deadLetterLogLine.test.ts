/**
 * Review 37 (failing test): a record's bytes reach the text of a log line unescaped.
 *
 * When the Kafka consumer dead-letters a record it logs at warn with the detail interpolated into
 * the message string: `Kafka <topic>[p] offset o dead-lettered to <dlq>: unparseable_body (body is
 * not JSON: Unexpected token '…', "<the first characters of the record's value>"... is not valid
 * JSON)`. V8's JSON.parse error quotes the value raw (all of a short one), so a producer on the topic chooses part of a
 * ferry log line's message: ESC sequences that drive the operator's terminal, a line break that
 * starts a forged line. ferry's loggers keep hostile text in the fields, not the message:
 * `fromNestLogger` (@ferry/nestjs) writes the message as it is and the fields as JSON, and the
 * RabbitMQ and SQS consumers log the same detail as a field (`{ reason, detail }`, "dead-lettering a
 * delivery (unparseable_body)"). With Nest's console logger the record's escape sequences are
 * printed to the terminal as they are.
 *
 * Real Kafka. Fix direction: log the detail as a field (as RabbitMQ and SQS do), or escape it
 * (escapeUnshowable) before it enters the message text.
 */
import type { LoggerService } from '@nestjs/common';
import { fromNestLogger } from '@ferry/nestjs';
import { FERRY_HEADERS } from '@ferry/core';
import { REJECT_REASONS } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { readBack } from './support';

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

/** Nest's LoggerService as its ConsoleLogger sees it: each line's text, as it would print it. */
function nestLines(): { service: LoggerService; printed: string[] } {
  const printed: string[] = [];
  const keep = (message: unknown) => void printed.push(String(message));
  return { service: { log: keep, error: keep, warn: keep, debug: keep, verbose: keep }, printed };
}

// C0 controls (ESC, line feed, …), DEL and C1: what makes one logged line drive a terminal or become two.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

test("a dead-lettered record's value drives no terminal and forges no line in the log's text", async () => {
  const topic = await harness.topicPair('log-line');
  // Not JSON: an ANSI "clear screen", then a line break that starts another line.
  const hostile = '\u001b[2J\nadmin logged in';
  await harness.raw.send({
    topic,
    messages: [
      { value: hostile, headers: { [FERRY_HEADERS.messageId]: 'hostile-1' } },
      { value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'fine-2' } },
    ],
  });
  const nest = nestLines();
  const { groupId } = await harness.start(topic, 'log-line', { logger: fromNestLogger(nest.service) });
  await harness.waitFullyCommitted(groupId, topic);
  const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
  expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.unparseableBody);

  const deadLetterLines = nest.printed.filter((line) => line.includes('dead-lettered'));
  expect(deadLetterLines).toHaveLength(1);
  // Today: `Kafka …: unparseable_body (body is not JSON: Unexpected token '␛', "␛[2J⏎admin logged in" is not valid JSON) {…}`,
  // with the ESC and the line feed raw.
  expect(deadLetterLines.filter((line) => CONTROL.test(line))).toEqual([]);
});
