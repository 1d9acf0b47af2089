#!/usr/bin/env node
import { describeError } from '@ferry/core/transport';
import { runCli, stdoutClosed } from './cli';

// A reader that closed the pipe (`ferry outbox list | head -2`) has every line it wanted: nothing
// more is written to it, and no EPIPE stack trace. The command still ends with its answer's exit
// code (stdoutClosed): a mutation with a conflict is 1 whoever reads its lines. Any other error on
// standard output stays fatal.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') return stdoutClosed();
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
