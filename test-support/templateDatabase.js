// One migrated database per jest run, the template every test database is copied from
// (CREATE DATABASE ... TEMPLATE): copying it costs a few milliseconds of CPU where migrating
// each new database cost ~0.1 s in the test process and as much again in PostgreSQL, for every
// one of the suite's ~900 files. jest's globalSetup names it (this machine and the run's process
// id in the name) and its globalTeardown drops it; a run killed before its teardown leaves it to
// the next run's setup on this machine. test-support/database.ts builds it on first use, on the
// server the run was started with only.
const { createHash } = require('node:crypto');
const { hostname } = require('node:os');
const { Client } = require('pg');

const DEFAULT_SERVER = 'postgresql://postgres@127.0.0.1:5432/test';
/** Names of template databases; never matching `ferry_t_%`, the test databases' pattern. */
const PREFIX = 'ferrytemplate_';
const CONNECT_DEADLINE_MS = 10_000;
const STATEMENT_DEADLINE_MS = 20_000;

function serverUrl() {
  return process.env.FERRY_DATABASE_URL ?? DEFAULT_SERVER;
}

/** Runs `work(client)` on a connection to the run's server; a server that is down is no error here. */
async function onServer(work) {
  const client = new Client({
    connectionString: serverUrl(),
    connectionTimeoutMillis: CONNECT_DEADLINE_MS,
    query_timeout: STATEMENT_DEADLINE_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await work(client);
  } catch {
    // The tests themselves report a server they cannot reach.
  } finally {
    await Promise.race([
      client.end().catch(() => undefined),
      new Promise((r) => setTimeout(r, 2_000).unref()),
    ]);
  }
}

/** This machine in a template's name: a run elsewhere on a shared server is never taken for gone. */
const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** Whether process `pid` runs on this machine. */
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The templates of this machine's runs that were killed before their teardown (their process is gone). */
async function dropOrphans(client) {
  const mine = `${PREFIX}${HOST}_`;
  const { rows } = await client.query(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [
    mine,
  ]);
  for (const { datname } of rows) {
    const pid = Number(datname.slice(mine.length).split('_')[0]);
    // Names are generated below from digits and hex only; identifiers cannot be bound.
    if (Number.isInteger(pid) && pid > 0 && !running(pid) && /^[a-z0-9_]+$/.test(datname)) {
      await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  }
}

async function globalSetup() {
  const name = `${PREFIX}${HOST}_${process.pid}_${Math.random().toString(16).slice(2, 10)}`;
  process.env.FERRY_TEST_TEMPLATE = name;
  process.env.FERRY_TEST_TEMPLATE_SERVER = serverUrl();
  await onServer(dropOrphans);
}

async function globalTeardown() {
  const name = process.env.FERRY_TEST_TEMPLATE;
  if (name === undefined || !name.startsWith(PREFIX)) return;
  await onServer(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`DROP DATABASE IF EXISTS ${name}_build WITH (FORCE)`);
  });
}

module.exports = { globalSetup, globalTeardown, PREFIX };
