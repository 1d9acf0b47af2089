#!/usr/bin/env node
// Prints a new Kafka cluster id: 16 random bytes, base64url (22 characters), as kafka-storage's own
// random-uuid makes them. An id that starts with '-' is drawn again: kafka.tools.StorageTool's
// argument parser reads `--cluster-id -xyz…` as a missing value ("expected one argument"), which
// failed a clean CI run once in 64 (the first base64url character is '-' for a first byte 0xF8..0xFB).
'use strict';
const crypto = require('node:crypto');

function newClusterId(randomBytes = crypto.randomBytes) {
  for (;;) {
    const id = Buffer.from(randomBytes(16)).toString('base64url');
    if (usableClusterId(id)) return id;
  }
}

function usableClusterId(id) {
  return /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/.test(id);
}

module.exports = { newClusterId, usableClusterId };

if (require.main === module) {
  const existing = process.argv[2];
  process.stdout.write(existing && usableClusterId(existing) ? existing : newClusterId());
}
