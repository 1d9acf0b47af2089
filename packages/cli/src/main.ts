#!/usr/bin/env node
import { runCli } from './cli';

// A reader that closed the pipe (`ferry outbox list | head -2`) has every line it wanted: end
// quietly, as Unix tools do, instead of dying on EPIPE with a stack trace. Any other error on
// standard output stays fatal.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ferry: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
