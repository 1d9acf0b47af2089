// Tests for scripts/services (the local PostgreSQL / RabbitMQ / Kafka / ElasticMQ launcher).
// They use the real services: `up` starts or reuses them and leaves Kafka and ElasticMQ running for
// the other test suites. Anything destructive runs against a throw-away state folder
// (FERRY_SERVICES_DIR) and spare ports, so the shared services are never stopped.
const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'services');
const STATE = process.env.FERRY_SERVICES_DIR || path.join(ROOT, '.services');
const SERVICES = ['postgres', 'rabbitmq', 'kafka', 'elasticmq'];
const TIMEOUT = 180_000;

function services(args, env = {}) {
  const res = spawnSync(SCRIPT, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 170_000,
  });
  if (res.error) throw res.error;
  return { code: res.status, stdout: res.stdout, stderr: res.stderr, lines: parse(res.stdout) };
}

// "name state version endpoint detail..." -> { name: { state, version, endpoint, detail } }
function parse(stdout) {
  const out = {};
  for (const line of stdout.split('\n')) {
    const m = /^(postgres|rabbitmq|kafka|elasticmq)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (m) out[m[1]] = { state: m[2], version: m[3], endpoint: m[4], detail: m[5] };
  }
  return out;
}

function describeRun(r) {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

function startTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

function readPidFile(file) {
  const [pid, start] = fs.readFileSync(file, 'utf8').trim().split(/\s+/);
  return { pid: Number(pid), start };
}

async function waitFor(what, condition, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const scratch = [];
function scratchDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-services-test-'));
  scratch.push(dir);
  return dir;
}

const decoys = [];
function decoy(argv0) {
  const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore', argv0 });
  child.unref();
  decoys.push(child.pid);
  return child.pid;
}

afterAll(() => {
  for (const pid of decoys) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

test(
  'up, then status lists four healthy services with versions',
  () => {
    const up = services(['up']);
    expect({ code: up.code, out: describeRun(up) }).toMatchObject({ code: 0 });
    for (const s of SERVICES) {
      expect(['started', 'reused']).toContain(up.lines[s] && up.lines[s].state);
    }

    const status = services(['status']);
    expect({ code: status.code, out: describeRun(status) }).toMatchObject({ code: 0 });
    expect(Object.keys(status.lines).sort()).toEqual([...SERVICES].sort());
    for (const s of SERVICES) {
      expect(status.lines[s].state).toBe('healthy');
      expect(status.lines[s].endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
    }
    // PostgreSQL and RabbitMQ say their version over the wire; the JVM services' versions come
    // from the installation that started them, so one started elsewhere (another checkout, the
    // user's own) is reused with version 'unknown'.
    const startedElsewhere = (s) => /not started by ferry/.test(status.lines[s].detail);
    for (const s of SERVICES) {
      if (startedElsewhere(s) && (s === 'kafka' || s === 'elasticmq')) {
        expect(status.lines[s].version).toBe('unknown');
      } else {
        expect(status.lines[s].version).toMatch(/^\d+\.\d+/);
      }
    }
    if (!startedElsewhere('kafka')) expect(status.lines.kafka.version).toMatch(/^4\./);
  },
  TIMEOUT,
);

test(
  'a second up reuses everything and starts no new process',
  () => {
    const files = ['kafka/kafka.pid', 'elasticmq/elasticmq.pid'].map((f) => path.join(STATE, f));
    const before = files.filter((f) => fs.existsSync(f)).map((f) => [f, readPidFile(f)]);

    const up = services(['up']);
    expect({ code: up.code, out: describeRun(up) }).toMatchObject({ code: 0 });
    for (const s of SERVICES) expect(up.lines[s].state).toBe('reused');
    expect(up.stderr).not.toMatch(/downloading/);

    for (const [file, rec] of before) {
      expect(readPidFile(file)).toEqual(rec);
      expect(alive(rec.pid)).toBe(true);
      expect(startTime(rec.pid)).toBe(rec.start);
    }
  },
  TIMEOUT,
);

test(
  'status exits non-zero and names the service that is down',
  async () => {
    const state = scratchDir();
    const r = services(['status'], { FERRY_SERVICES_DIR: state, FERRY_SQS_PORT: String(await freePort()) });
    expect(r.code).not.toBe(0);
    expect(r.lines.elasticmq.state).toBe('down');
    for (const s of ['postgres', 'rabbitmq', 'kafka']) expect(r.lines[s].state).toBe('healthy');
  },
  TIMEOUT,
);

test(
  'down never kills a process it did not start, even when a pid file points at it',
  () => {
    // The real brokers' cases need this checkout's pid files (absent when another checkout or
    // the user started Kafka and ElasticMQ, and `up` reused them).
    const pidFileOf = (service) => path.join(STATE, service, `${service}.pid`);
    const realKafka = fs.existsSync(pidFileOf('kafka')) ? readPidFile(pidFileOf('kafka')) : null;
    const realSqs = fs.existsSync(pidFileOf('elasticmq')) ? readPidFile(pidFileOf('elasticmq')) : null;
    const plainSleep = decoy();
    const lookalike = decoy('org.elasticmq.server.Main'); // command line mentions the ElasticMQ main class

    // Each case: a pid file in a state folder this script never started anything from.
    const cases = [
      // PID reused by an unrelated process (start time recorded correctly, command line differs)
      { service: 'kafka', pid: plainSleep, start: startTime(plainSleep) },
      // a process that looks like ElasticMQ but is not the one started from this folder
      { service: 'elasticmq', pid: lookalike, start: startTime(lookalike) },
      // garbage
      { service: 'kafka', pid: plainSleep, start: 'x' },
    ];
    // a real broker, started from another state folder (another checkout)
    if (realKafka) cases.push({ service: 'kafka', pid: realKafka.pid, start: realKafka.start });
    // the recorded process is gone and its PID now belongs to someone else (start time differs)
    if (realSqs)
      cases.push({ service: 'elasticmq', pid: realSqs.pid, start: String(Number(realSqs.start) - 1) });
    for (const c of cases) {
      const state = scratchDir();
      const pidFile = path.join(state, c.service, `${c.service}.pid`);
      fs.mkdirSync(path.dirname(pidFile), { recursive: true });
      fs.writeFileSync(pidFile, `${c.pid} ${c.start}\n`);
      const before = startTime(c.pid);

      const r = services(['down', c.service], { FERRY_SERVICES_DIR: state });
      expect({ code: r.code, out: describeRun(r) }).toMatchObject({ code: 0 });
      expect(r.lines[c.service].state).toBe('left');
      expect(r.lines[c.service].detail).toMatch(/not the process this script started/);
      expect(alive(c.pid)).toBe(true);
      expect(startTime(c.pid)).toBe(before);
      expect(fs.existsSync(pidFile)).toBe(false); // the stale record is cleaned up
    }

    // PostgreSQL and RabbitMQ that the script merely reused are left running.
    const state = scratchDir();
    const r = services(['down', 'postgres', 'rabbitmq'], { FERRY_SERVICES_DIR: state });
    expect(r.code).toBe(0);
    expect(r.lines.postgres.state).toBe('left');
    expect(r.lines.rabbitmq.state).toBe('left');

    const status = services(['status']);
    expect({ code: status.code, out: describeRun(status) }).toMatchObject({ code: 0 });
    if (realKafka) expect(readPidFile(pidFileOf('kafka'))).toEqual(realKafka);
    if (realSqs) expect(readPidFile(pidFileOf('elasticmq'))).toEqual(realSqs);
  },
  TIMEOUT,
);

test(
  'down stops what up started, by its pid (private ElasticMQ on a spare port)',
  async () => {
    const state = scratchDir();
    fs.mkdirSync(path.join(state, 'elasticmq'));
    // reuse the downloaded jars instead of fetching again
    fs.symlinkSync(path.join(STATE, 'elasticmq', 'libs'), path.join(state, 'elasticmq', 'libs'));
    const env = { FERRY_SERVICES_DIR: state, FERRY_SQS_PORT: String(await freePort()) };

    const up = services(['up', 'sqs'], env);
    expect({ code: up.code, out: describeRun(up) }).toMatchObject({ code: 0 });
    expect(up.lines.elasticmq.state).toBe('started');
    const started = readPidFile(path.join(state, 'elasticmq', 'elasticmq.pid'));
    expect(alive(started.pid)).toBe(true);
    expect(services(['status', 'sqs'], env).code).toBe(0);

    const down = services(['down', 'sqs'], env);
    expect({ code: down.code, out: describeRun(down) }).toMatchObject({ code: 0 });
    expect(down.lines.elasticmq.state).toBe('stopped');
    await waitFor(`pid ${started.pid} to exit`, () => !alive(started.pid));
    expect(fs.existsSync(path.join(state, 'elasticmq', 'elasticmq.pid'))).toBe(false);
    const status = services(['status', 'sqs'], env);
    expect(status.code).not.toBe(0);
    expect(status.lines.elasticmq.state).toBe('down');

    // the shared services were not touched
    expect(services(['status']).code).toBe(0);
  },
  TIMEOUT,
);

test(
  'a service that cannot start is reported with its name and log file, exit non-zero',
  async () => {
    const state = scratchDir();
    const libs = path.join(state, 'elasticmq', 'libs');
    fs.mkdirSync(libs, { recursive: true });
    // "downloaded" jars that are not jars: java cannot find the main class and exits
    fs.writeFileSync(path.join(libs, '.complete'), '');
    fs.writeFileSync(path.join(libs, 'elasticmq-server_2.13-1.7.1.jar'), '');
    const env = {
      FERRY_SERVICES_DIR: state,
      FERRY_SQS_PORT: String(await freePort()),
      FERRY_ELASTICMQ_VERSION: '1.7.1',
    };

    const r = services(['up', 'elasticmq'], env);
    expect(r.code).not.toBe(0);
    const log = path.join(fs.realpathSync(state), 'elasticmq', 'elasticmq.log');
    expect(r.stderr).toMatch(/^elasticmq\s+FAILED/m);
    expect(r.stderr).toContain(`elasticmq: see log file ${log}`);
    expect(fs.existsSync(path.join(state, 'elasticmq', 'elasticmq.pid'))).toBe(false);
  },
  TIMEOUT,
);

test(
  "Kafka's data folder is formatted even when the saved cluster id would read as an option",
  () => {
    // A clean CI run failed once: the id drawn started with '-', and kafka-storage read
    // `--cluster-id -R10g…` as a missing value. An unusable saved id is drawn again. Only the step
    // `up` takes before it starts a broker (kafka_prepare, kafka.tools.StorageTool format) runs,
    // in a throw-away state folder: a private broker's start and stop (seconds of JVM CPU) would
    // prove nothing more about the id.
    const state = scratchDir();
    fs.mkdirSync(path.join(state, 'kafka'));
    fs.symlinkSync(path.join(STATE, 'kafka', 'libs'), path.join(state, 'kafka', 'libs'));
    fs.writeFileSync(path.join(state, 'kafka', 'cluster.id'), '-R10gLknIxIrfwcSu4qpwA');
    const d = path.join(ROOT, 'scripts', 'services.d');
    const script = [
      'set -uo pipefail',
      ...['common.sh', 'jvm.sh', 'kafka.sh'].map((file) => `source ${JSON.stringify(path.join(d, file))}`),
      'find_java 17 || { echo "$JAVA_ERROR" >&2; exit 1; }',
      'kafka_prepare || { echo "$PREPARE_ERROR" >&2; cat "$KAFKA_LOG" >&2; exit 1; }',
    ].join('\n');
    const res = spawnSync('bash', ['-c', script], {
      cwd: ROOT,
      env: { ...process.env, FERRY_SERVICES_DIR: state },
      encoding: 'utf8',
      timeout: 170_000,
    });
    const run = { code: res.status, stdout: res.stdout, stderr: res.stderr };
    expect({ code: run.code, out: describeRun(run) }).toMatchObject({ code: 0 });
    const id = fs.readFileSync(path.join(state, 'kafka', 'cluster.id'), 'utf8');
    expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    expect(fs.readFileSync(path.join(state, 'kafka', 'data', 'meta.properties'), 'utf8')).toContain(
      `cluster.id=${id}`,
    );
  },
  TIMEOUT,
);

test('a new cluster id never starts with "-" and keeps a usable one', () => {
  const { newClusterId, usableClusterId } = require('../services.d/clusterId.js');
  // first byte 0xF8: base64url's first character is '-'; the second draw is used
  const draws = [Buffer.alloc(16, 0xf8), Buffer.alloc(16, 0x41)];
  const id = newClusterId(() => draws.shift());
  expect(id).toBe(Buffer.alloc(16, 0x41).toString('base64url'));
  expect(draws).toHaveLength(0);
  expect(usableClusterId('-R10gLknIxIrfwcSu4qpwA')).toBe(false);
  expect(usableClusterId('5-R10gLknIxIrfwcSu4qpw')).toBe(true);
  expect(usableClusterId('')).toBe(false);
});
