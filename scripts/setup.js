#!/usr/bin/env node
// Brings a fresh clone to a runnable state, doing only what is missing:
// dependencies (npm ci), services (scripts/services up), the Prisma client
// (prisma generate with the offline schema-engine stub), the build (tsc -b) and
// ferry's migrations on FERRY_DATABASE_URL. Uses only Node's standard library,
// because it runs before node_modules exists.
'use strict';
const { existsSync, statSync } = require('node:fs');
const path = require('node:path');
const { runChild } = require('./runChild');

const root = path.resolve(__dirname, '..');
const quiet = process.argv.includes('--quiet');

/**
 * Runs one step; exits on its failure. Through runChild, not execFileSync: stopping setup (a
 * SIGTERM / SIGINT / SIGHUP) stops the step's command too (review 75).
 */
async function step(title, command, args, env = {}) {
  const started = Date.now();
  if (!quiet) process.stdout.write(`setup: ${title}\n`);
  const { status, signal, error, output } = await runChild(command, args, {
    cwd: root,
    stdio: quiet ? 'pipe' : 'inherit',
    env: { ...process.env, ...env },
  });
  if (status !== 0) {
    if (quiet && output) process.stdout.write(output);
    const why = error ? error.message : signal ? `ended by ${signal}` : `exit ${status}`;
    process.stderr.write(`setup: "${title}" failed (${command} ${args.join(' ')}: ${why})\n`);
    process.exit(status);
  }
  if (!quiet)
    process.stdout.write(`setup: ${title} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

function dependenciesCurrent(dir = root) {
  const marker = path.join(dir, 'node_modules/.package-lock.json');
  if (!existsSync(marker)) return false;
  return statSync(marker).mtimeMs >= statSync(path.join(dir, 'package-lock.json')).mtimeMs;
}

async function main() {
  // `--generate`: only the Prisma clients (npm run generate), after a schema change.
  const generateOnly = process.argv.includes('--generate');

  if (!generateOnly && !dependenciesCurrent())
    await step('install dependencies', 'npm', ['ci', '--no-audit', '--no-fund']);
  // NestJS 12 in its own folder, for @ferry/nestjs's compatibility test (the workspace uses 11).
  const nest12 = path.join(root, 'packages/nestjs/compat/nest12');
  if (!generateOnly && !dependenciesCurrent(nest12)) {
    await step('install NestJS 12 (compatibility test)', 'npm', [
      'ci',
      '--prefix',
      nest12,
      '--no-audit',
      '--no-fund',
    ]);
  }
  if (!generateOnly) await step('start services', path.join(root, 'scripts/services'), ['up']);
  // ferry's own models (used by the tests) and the demo application's models.
  for (const schema of [
    'packages/core/prisma/schema',
    'examples/demo/prisma/schema.prisma',
    'examples/rabbitmq-consumer/prisma/schema.prisma',
    'examples/outbox-to-kafka/prisma/schema.prisma',
    'examples/sqs/prisma/schema.prisma',
  ]) {
    await step(`generate the Prisma client (${schema})`, 'npx', ['prisma', 'generate', '--schema', schema], {
      PRISMA_SCHEMA_ENGINE_BINARY: path.join(root, 'scripts/stub/schema-engine'),
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    });
  }
  if (generateOnly) return;
  await step('build', 'npx', ['tsc', '-b']);
  // The CLI has no default database: the tests' one, unless FERRY_DATABASE_URL names another.
  await step('migrate', 'node', [path.join(root, 'packages/cli/dist/main.js'), 'migrate'], {
    FERRY_DATABASE_URL: process.env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test',
  });
}

main();
