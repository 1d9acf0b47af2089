#!/usr/bin/env node
'use strict';
// Readiness checks for scripts/services, by real protocol calls (never a bare port check):
//   postgres  : `select version()` with pg (user postgres, trust auth)
//   rabbitmq  : an AMQP connection with amqplib; version from the server properties
//   kafka     : kafkajs admin.describeCluster(); version from the broker jar name (no version API)
//   elasticmq : SQS ListQueues with @aws-sdk/client-sqs; version from the server jar name
//
// Usage:
//   node readiness.js check <service>                       one attempt
//   node readiness.js wait  <service> --deadline 60 [--pid N] poll until ready, deadline or pid exit
//   node readiness.js ensure-db                              create database $FERRY_PG_DATABASE if missing
// Prints one line "ok|fail<TAB>version<TAB>detail" and exits 0 when ready, 1 otherwise.
// Config comes from the environment (exported by scripts/services):
//   FERRY_HOST, FERRY_PG_PORT, FERRY_PG_DATABASE, FERRY_RABBITMQ_PORT, FERRY_KAFKA_PORT,
//   FERRY_SQS_PORT, FERRY_KAFKA_LIBS, FERRY_ELASTICMQ_LIBS (jar folders, for the version).

const fs = require('node:fs');

// The AWS SDK warns on stderr about future Node versions; that is noise for a readiness probe.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const type = typeof rest[0] === 'string' ? rest[0] : rest[0] && rest[0].type;
  if (type === 'NodeVersionSupportWarning' || String(warning).includes('AWS SDK')) return;
  return emitWarning.call(process, warning, ...rest);
};

const env = process.env;
const HOST = env.FERRY_HOST || '127.0.0.1';
const PG_PORT = Number(env.FERRY_PG_PORT || 5432);
const PG_DATABASE = env.FERRY_PG_DATABASE || 'test';
const RABBITMQ_PORT = Number(env.FERRY_RABBITMQ_PORT || 5672);
const KAFKA_PORT = Number(env.FERRY_KAFKA_PORT || 9092);
const SQS_PORT = Number(env.FERRY_SQS_PORT || 9324);
const ATTEMPT_TIMEOUT_MS = 8000;

function load(name) {
  try {
    return require(name);
  } catch (err) {
    throw new Error(`cannot load ${name} (${err.code || err.message}); run npm install at the repo root`);
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Version from a jar file name such as kafka_2.13-4.1.2.jar, in a folder we downloaded.
function jarVersion(dir, prefix) {
  if (!dir) return undefined;
  try {
    const re = new RegExp(`^${prefix.replace(/[.]/g, '\\.')}-(\\d[^/]*)\\.jar$`);
    for (const f of fs.readdirSync(dir)) {
      const m = re.exec(f);
      if (m) return m[1];
    }
  } catch {
    /* folder missing: version unknown */
  }
  return undefined;
}

async function pgQuery(database, sql, params) {
  const { Client } = load('pg');
  const client = new Client({
    host: HOST,
    port: PG_PORT,
    user: 'postgres',
    database,
    connectionTimeoutMillis: 4000,
    query_timeout: 4000,
  });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => {});
  }
}

const checks = {
  // database: the database to query. `up` first checks `postgres` (always there), then ensures `test`.
  async postgres() {
    const database = env.FERRY_PG_CHECK_DATABASE || PG_DATABASE;
    const res = await pgQuery(database, 'select version() as v');
    const full = res.rows[0].v;
    const m = /PostgreSQL (\S+)/.exec(full);
    return { version: m ? m[1] : full, detail: `select version() ok on database ${database}` };
  },

  async rabbitmq() {
    const amqp = load('amqplib');
    const conn = await amqp.connect(
      {
        protocol: 'amqp',
        hostname: HOST,
        port: RABBITMQ_PORT,
        username: 'guest',
        password: 'guest',
        vhost: '/',
      },
      { timeout: 4000 },
    );
    conn.on('error', () => {});
    try {
      const props = conn.connection.serverProperties || {};
      return {
        version: String(props.version || 'unknown'),
        detail:
          `AMQP connection ok (${props.product || 'AMQP server'} ${props.version || ''}, ${props.platform || ''})`.trim(),
      };
    } finally {
      await conn.close().catch(() => {});
    }
  },

  async kafka() {
    const { Kafka, logLevel } = load('kafkajs');
    const kafka = new Kafka({
      clientId: 'ferry-services-readiness',
      brokers: [`${HOST}:${KAFKA_PORT}`],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 3000,
      requestTimeout: 5000,
      retry: { retries: 0 },
    });
    const admin = kafka.admin({ retry: { retries: 0 } });
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      if (!cluster.brokers.length) throw new Error('describeCluster returned no brokers');
      const version = jarVersion(env.FERRY_KAFKA_LIBS, 'kafka_2.13') || 'unknown';
      return {
        version,
        detail: `describeCluster ok (cluster ${cluster.clusterId}, ${cluster.brokers.length} broker, controller ${cluster.controller})`,
      };
    } finally {
      await admin.disconnect().catch(() => {});
    }
  },

  async elasticmq() {
    const { SQSClient, ListQueuesCommand } = load('@aws-sdk/client-sqs');
    const client = new SQSClient({
      region: 'us-east-1',
      endpoint: `http://${HOST}:${SQS_PORT}`,
      credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
      maxAttempts: 1,
    });
    try {
      const res = await client.send(new ListQueuesCommand({}));
      const version = jarVersion(env.FERRY_ELASTICMQ_LIBS, 'elasticmq-server_2.13') || 'unknown';
      return { version, detail: `ListQueues ok (${(res.QueueUrls || []).length} queues)` };
    } finally {
      client.destroy();
    }
  },
};

// Alive and not a zombie (a process that died while our parent shell has not reaped it yet).
function pidAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function describe(err) {
  if (!err) return 'unknown error';
  if (err.errors && err.errors.length) return err.errors.map(describe).join('; '); // AggregateError
  const parts = [err.name && err.name !== 'Error' ? err.name : null, err.code, err.message].filter(Boolean);
  return [...new Set(parts)].join(': ') || String(err);
}

function print(ok, version, detail) {
  const clean = (s) => String(s == null ? '' : s).replace(/[\t\r\n]+/g, ' ');
  process.stdout.write(`${ok ? 'ok' : 'fail'}\t${clean(version || '-')}\t${clean(detail)}\n`);
}

async function attempt(service) {
  return withTimeout(checks[service](), ATTEMPT_TIMEOUT_MS, service);
}

async function ensureDb() {
  const res = await pgQuery('postgres', 'select 1 from pg_database where datname = $1', [PG_DATABASE]);
  if (res.rowCount === 0) {
    // identifiers cannot be parameters; the name comes from our own env, quote it anyway
    await pgQuery('postgres', `create database "${PG_DATABASE.replace(/"/g, '""')}"`).catch((err) => {
      if (err.code !== '42P04') throw err; // created concurrently: fine
    });
    return `created database ${PG_DATABASE}`;
  }
  return `database ${PG_DATABASE} exists`;
}

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
}

async function main() {
  const [cmd, service] = process.argv.slice(2);
  if (cmd === 'ensure-db') {
    print(true, '', await ensureDb());
    return 0;
  }
  if (!checks[service] || !['check', 'wait'].includes(cmd)) {
    process.stderr.write(
      'usage: readiness.js check|wait <postgres|rabbitmq|kafka|elasticmq> [--deadline S] [--pid N]\n',
    );
    return 2;
  }
  if (cmd === 'check') {
    try {
      const r = await attempt(service);
      print(true, r.version, r.detail);
      return 0;
    } catch (err) {
      print(false, '', describe(err));
      return 1;
    }
  }
  const deadline = Date.now() + Number(arg('deadline', 60)) * 1000;
  const pid = Number(arg('pid', 0));
  let last = 'not ready';
  for (;;) {
    try {
      const r = await attempt(service);
      print(true, r.version, r.detail);
      return 0;
    } catch (err) {
      last = describe(err);
    }
    if (pid && !pidAlive(pid)) {
      print(false, '', `process ${pid} exited before ${service} became ready (last error: ${last})`);
      return 1;
    }
    if (Date.now() >= deadline) {
      print(false, '', `not ready after ${arg('deadline', 60)} s (last error: ${last})`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    print(false, '', describe(err));
    process.exit(1);
  },
);
