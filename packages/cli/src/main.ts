#!/usr/bin/env node
import { runCli } from './cli';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ferry: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
