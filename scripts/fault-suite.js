#!/usr/bin/env node
// `npm run test:<suite> -- [scenario ...] [jest options]`: runs one fault suite (a folder of
// fault-tests/), or only the scenarios named (file names in it, without `.test.ts`). jest ORs a
// pattern given after the script's own, so `npm run test:broker-recovery -- kafka-outaeg` (a typo)
// ran every scenario of the suite (review 34); here a name selects files of its suite only, and a
// name that matches none fails with jest's "No tests found".
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { runChild } = require('./runChild');

/**
 * jest options whose value is the next argument (`-t name`, `--test-timeout 600000`), so that
 * value is not taken for a scenario: every option jest-cli declares that is not a boolean, by its
 * name, its kebab-case spelling and its alias (review 39: a short list missed most of them).
 */
function optionsTakingValue() {
  const names = new Set();
  const { yargsOptions } = require('jest-cli');
  for (const [name, option] of Object.entries(yargsOptions)) {
    if (option.type === 'boolean') continue;
    names.add(`--${name}`);
    names.add(`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    for (const alias of [option.alias ?? []].flat())
      names.add(alias.length === 1 ? `-${alias}` : `--${alias}`);
  }
  return names;
}
const TAKES_VALUE = optionsTakingValue();

const [suite, ...rest] = process.argv.slice(2);
if (suite === undefined || !/^[a-z][a-z-]*$/.test(suite)) {
  process.stderr.write('usage: node scripts/fault-suite.js <suite folder> [scenario ...] [jest options]\n');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');
/**
 * A scenario is its file name without `.test.ts`; a path to a file of the suite's folder (what a
 * shell completes, relative to where the command was typed: npm's INIT_CWD) is that file's name
 * (review 90). A path elsewhere stays a name that matches no file: jest's "No tests found".
 */
function scenarioName(arg) {
  if (!arg.includes('/')) return arg.replace(/\.test\.ts$/, '');
  const file = path.resolve(process.env.INIT_CWD ?? process.cwd(), arg);
  // Its folder's real path, as root's (__dirname) is: a path through a symbolic link (review 91).
  if (realFolder(path.dirname(file)) !== realFolder(path.join(root, 'fault-tests', suite))) return arg;
  return path.basename(file).replace(/\.test\.ts$/, '');
}
function realFolder(folder) {
  try {
    return fs.realpathSync(folder);
  } catch {
    return folder;
  }
}
const scenarios = [];
const options = [];
for (let i = 0; i < rest.length; i += 1) {
  const arg = rest[i];
  if (arg.startsWith('-')) {
    options.push(arg);
    if (!arg.includes('=') && TAKES_VALUE.has(arg) && i + 1 < rest.length) options.push(rest[(i += 1)]);
  } else {
    scenarios.push(scenarioName(arg));
  }
}
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const pattern =
  scenarios.length === 0
    ? `fault-tests/${suite}/`
    : `fault-tests/${suite}/(${scenarios.map(escapeRegExp).join('|')})\\.test\\.ts$`;
const jest = path.resolve(__dirname, '../node_modules/.bin/jest');
// Not spawnSync: a SIGINT / SIGTERM / SIGHUP to this script (or to the npm command running it) is
// passed on to jest's process group, and a second one kills it at once (runChild.js, review 75).
runChild(jest, ['--selectProjects', '@ferry/fault-tests', '--testPathPatterns', pattern, ...options], {
  cwd: root,
}).then(({ status, error }) => {
  if (error) process.stderr.write(`fault-suite: could not run jest: ${error.message}\n`);
  process.exit(status);
});
