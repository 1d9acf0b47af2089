/**
 * Review finding (failed first): `ferry outbox frobnicate` hinted "see `ferry outbox frobnicate
 * --help`", a command that does not exist. A usage hint names the deepest command that exists.
 */
import { runCli } from '@ferry/cli';
import { captureIo } from './io';

it.each([
  [['outbox', 'frobnicate'], 'ferry outbox'],
  [['inbox', 'frobnicate', '--json'], 'ferry inbox'],
  [['audit', 'nope'], 'ferry audit'],
  [['frobnicate'], 'ferry'],
  [['frobnicate', 'more'], 'ferry'],
  [['outbox', 'retry'], 'ferry outbox retry'],
])('ferry %j hints `%s --help`', async (argv, command) => {
  const io = captureIo();
  expect(await runCli(argv, io, {})).toBe(2);
  const text = [...io.errors, ...io.lines].join('\n');
  expect(text).toContain(`see \`${command} --help\``);
});
