#!/usr/bin/env node
import { describeError } from '@ferry/core/transport';
import { readerGone, runCli } from './cli';

// A reader that closed a pipe (`ferry outbox list | head -2`, `ferry … 2>&1 | head -1`) has every
// line it wanted: nothing more is written to it, and no EPIPE stack trace. The command still ends
// with its answer's exit code (readerGone): a mutation with a conflict is 1, a usage error 2,
// whoever reads its lines. Every stream the CLI writes (its lines, notes, errors, progress bars)
// is one of these two. Any other error on them stays fatal.
for (const stream of ['stdout', 'stderr'] as const) {
  process[stream].on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') return readerGone(stream);
    throw error;
  });
}

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
