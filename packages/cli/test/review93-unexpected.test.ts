/**
 * Review 93 (failed first): the answer of a failure that is no FerryError (FERRY_UNEXPECTED).
 *
 * What I did: printed the failure of a command whose work threw an Error quoting a database URL
 * with its password (as a driver or a library under ferry may), a string doing the same, a
 * null-prototype object and an object whose toString throws, alone and after part of a bulk
 * command was applied (FailedPartway), in text and under --json.
 * What happened: the message was `String(error)`: the password reached the terminal and the JSON
 * answer; the two unreadable values made printFailure (and FailedPartway's constructor) throw, so
 * the command answered nothing of its own.
 * What should happen: the message redacted as every error text ferry shows (core's redact home),
 * and any thrown value answers FERRY_UNEXPECTED, exit 1.
 */
import type { Context } from '../src/command';
import { answerFor } from '../src/errors';
import { FailedPartway, printFailure } from '../src/failure';
import { captureIo } from './io';

const URL_ERROR = 'connect failed: postgres://billing:hunter2@db.internal:5432/app';

function contextOf(json: boolean): Context & { io: ReturnType<typeof captureIo> } {
  return {
    io: captureIo(),
    env: {},
    json,
    statementTimeoutMs: () => 30_000,
    db: () => Promise.reject(new Error('no database in this test')),
    exitCode: 0,
  };
}

const throwingToString = {
  toString(): string {
    throw new Error('no text');
  },
};

const thrown: readonly [string, unknown][] = [
  ['an Error quoting a URL with its password', new Error(URL_ERROR)],
  ['a string quoting a URL with its password', URL_ERROR],
  ['a null-prototype object', Object.create(null) as object],
  ['an object whose toString throws', throwingToString],
];

describe('a failure that is no FerryError', () => {
  it.each(thrown)('%s: answerFor gives FERRY_UNEXPECTED without the password', (_name, error) => {
    const answer = answerFor(error);
    expect(answer.code).toBe('FERRY_UNEXPECTED');
    expect(answer.exitCode).toBe(1);
    expect(answer.message).not.toContain('hunter2');
  });

  it('keeps the host of the URL, so the operator knows which connection failed', () => {
    expect(answerFor(new Error(URL_ERROR)).message).toContain('db.internal');
  });

  it.each(thrown)('%s: printed in text and JSON, partway or not, exit 1', (_name, error) => {
    const done = {
      action: 'outbox mark-failed',
      dryRun: false,
      results: [{ id: '3f0c0000-0000-4000-8000-0000000000e1', outcome: 'applied' }],
      counts: { applied: 1 },
    };
    for (const json of [false, true]) {
      for (const failure of [error, new FailedPartway(error, { done })]) {
        const ctx = contextOf(json);
        const code = printFailure(ctx, 'ferry outbox mark-failed', failure, '');
        const printed = [...ctx.io.lines, ...ctx.io.errors].join('\n');
        expect({ code, unexpected: printed.includes('FERRY_UNEXPECTED') }).toEqual({
          code: 1,
          unexpected: true,
        });
        expect(printed).not.toContain('hunter2');
      }
    }
  });
});
