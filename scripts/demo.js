#!/usr/bin/env node
// The main demo (`npm run demo`, after `npm run setup`). Until the transports land it
// shows the foundation: the four services with their versions and ferry's schema.
'use strict';
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const { runCli } = require(path.join(root, 'packages/cli/dist/cli.js'));

async function main() {
  process.stdout.write('ferry demo: services\n');
  process.stdout.write(execFileSync(path.join(root, 'scripts/services'), ['status'], { encoding: 'utf8' }));
  process.stdout.write('\nferry demo: schema\n');
  const migrated = await runCli(['migrate']);
  const checked = await runCli(['check']);
  process.exitCode = migrated === 0 && checked === 0 ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`ferry demo failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
