#!/usr/bin/env node
// `npm run test:<suite> -- [scenario ...] [jest options]`: runs one fault suite (a folder of
// fault-tests/), or only the scenarios named (file names in it, without `.test.ts`). jest ORs a
// pattern given after the script's own, so `npm run test:broker-recovery -- kafka-outaeg` (a typo)
// ran every scenario of the suite (review 34); here a name selects files of its suite only, and a
// name that matches none fails with jest's "No tests found".
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

/** jest options whose value is the next argument (`-t name`), so that value is not a scenario. */
const TAKES_VALUE = new Set([
  '-t',
  '--testNamePattern',
  '--testTimeout',
  '-w',
  '--maxWorkers',
  '--reporters',
  '--seed',
  '--shard',
  '--outputFile',
]);

const [suite, ...rest] = process.argv.slice(2);
if (suite === undefined || !/^[a-z][a-z-]*$/.test(suite)) {
  process.stderr.write('usage: node scripts/fault-suite.js <suite folder> [scenario ...] [jest options]\n');
  process.exit(2);
}
const scenarios = [];
const options = [];
for (let i = 0; i < rest.length; i += 1) {
  const arg = rest[i];
  if (arg.startsWith('-')) {
    options.push(arg);
    if (TAKES_VALUE.has(arg) && i + 1 < rest.length) options.push(rest[(i += 1)]);
  } else {
    scenarios.push(arg.replace(/\.test\.ts$/, ''));
  }
}
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const pattern =
  scenarios.length === 0
    ? `fault-tests/${suite}/`
    : `fault-tests/${suite}/(${scenarios.map(escapeRegExp).join('|')})\\.test\\.ts$`;
const jest = path.resolve(__dirname, '../node_modules/.bin/jest');
const result = spawnSync(
  jest,
  ['--selectProjects', '@ferry/fault-tests', '--testPathPatterns', pattern, ...options],
  { stdio: 'inherit', cwd: path.resolve(__dirname, '..') },
);
if (result.error) {
  process.stderr.write(`fault-suite: could not run jest: ${result.error.message}\n`);
  process.exit(1);
}
process.exit(result.status ?? 1);
