#!/usr/bin/env node
// `npm run demo` runs setup first, then this: the main demo, built from examples/demo.
'use strict';
const path = require('node:path');

process.env.FERRY_LOG_LEVEL ??= 'error';
const { runDemo } = require(path.resolve(__dirname, '../examples/demo/dist/src/main.js'));

runDemo().then(
  (result) => {
    process.exitCode = result.disagreements.length === 0 ? 0 : 1;
  },
  (error) => {
    process.stderr.write(`ferry demo failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
