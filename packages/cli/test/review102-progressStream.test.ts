/**
 * Review 102 (failed first): the progress bar of a bulk command draws on stderr, but was switched
 * on by stdout being a terminal: `ferry outbox retry … > outcomes.txt` (stdout a file, stderr the
 * terminal) showed no bar, and stdout a terminal with stderr a file asked cli-progress to draw on
 * a file. Expected: the bar is switched on by the stream it draws on (CliIo.progress, stderr when
 * it is a terminal), whatever stdout is.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { runCli } from '@ferry/cli';
import { useCliDatabase } from './cliDatabase';
import { captureIo } from './io';

const d = useCliDatabase();

/** A terminal stream (isTTY) that keeps what is drawn on it. */
function terminal(): PassThrough & { isTTY: true; columns: number; drawn: () => string } {
  const chunks: string[] = [];
  const stream = Object.assign(new PassThrough(), { isTTY: true as const, columns: 80 });
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return Object.assign(stream, { drawn: () => chunks.join('') });
}

it('stdout redirected, stderr a terminal: the bar is drawn on stderr; the outcomes are plain lines', async () => {
  const stderr = terminal();
  const io = { ...captureIo(), isTTY: false, progress: stderr };
  const [a, b] = [randomUUID(), randomUUID()];
  const code = await runCli(['outbox', 'retry', a, b, '--database-url', d.test.url], io, {
    FERRY_ACTOR: 'ops@test',
  });
  expect(code).toBe(1);
  expect(io.lines).toEqual([`${a} not_found`, `${b} not_found`]);
  expect(stderr.drawn()).toContain('outbox retry [');
});

it('under --json no bar is drawn, even on a terminal', async () => {
  const stderr = terminal();
  const io = { ...captureIo(), isTTY: true, progress: stderr };
  const code = await runCli(['outbox', 'retry', randomUUID(), '--json', '--database-url', d.test.url], io, {
    FERRY_ACTOR: 'ops@test',
  });
  expect(code).toBe(1);
  expect(stderr.drawn()).toBe('');
});
