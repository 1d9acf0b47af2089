#!/usr/bin/env node
// Installs NestJS 12 for the @ferry/nestjs compatibility test from this folder's committed
// lockfile (npm ci), only when node_modules is missing or older than package-lock.json, like
// scripts/setup.js does for the root. Standard library only. Usage: node install.js [--quiet]
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, statSync } = require('node:fs');
const path = require('node:path');

function installed(dir = __dirname) {
  const marker = path.join(dir, 'node_modules/.package-lock.json');
  if (!existsSync(marker)) return false;
  return statSync(marker).mtimeMs >= statSync(path.join(dir, 'package-lock.json')).mtimeMs;
}

function install({ quiet = false } = {}) {
  if (installed()) return false;
  execFileSync('npm', ['ci', '--prefix', __dirname, '--no-audit', '--no-fund'], {
    stdio: quiet ? 'pipe' : 'inherit',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return true;
}

module.exports = { installed, install };

if (require.main === module) install({ quiet: process.argv.includes('--quiet') });
