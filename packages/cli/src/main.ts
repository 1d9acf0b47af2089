#!/usr/bin/env node
import { describeError } from '@ferry/core/transport';
import { runCli } from './cli';

// A reader that closed the pipe (`ferry outbox list | head -2`) has every line it wanted: end
// quietly, as Unix tools do, instead of dying on EPIPE with a stack trace. Any other error on
// standard output stays fatal.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// ferry's library warnings (pino JSON on stderr, e.g. ferry.db's "unclassified database error" for
// a database or role that does not exist) repeat what the CLI reports itself as `ferry <command>:
// CODE: message`: the binary lets only their errors through unless FERRY_LOG_LEVEL asks for more.
// Every logger ferry makes is made on first use, after this line.
process.env.FERRY_LOG_LEVEL ??= 'error';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ferry: ${describeError(error)}\n`);
    process.exitCode = 1;
  },
);
