/**
 * Many statements at once under one caller's AbortSignal (withStatementDeadline, as the admins,
 * health and emit's outcome lookup use it). Each statement's deadline listened to the caller's
 * signal with a listener of its own: past 10 at once Node printed MaxListenersExceededWarning
 * ("Possible EventTarget memory leak detected"), and the signal held one listener per statement in
 * flight. Now ferry holds at most one listener per signal, and none once nothing waits on it.
 * Jest's sandboxed `process` does not hear Node's warnings, so the warning itself is looked for in
 * a node process of its own (the built package); the listener counts are read here.
 */
import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg } from '@ferry/core';
import { abortableDelay } from '../../src/backoff';
import { withStatementDeadline } from '../../src/sql/statementDeadline';
import { transactionDeadline } from '../../src/sql/transactionLimits';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const CONCURRENT = 50;

let t: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new pg.Pool({ connectionString: t.url, max: 5 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** The built package, for the node process of its own. */
const DIST = path.resolve(__dirname, '../../dist');

/** In a node process of its own: the statements as below; prints the names of its warnings. */
const SCRIPT = `
const pg = require('pg');
const { fromPg } = require(${JSON.stringify(DIST)});
const { withStatementDeadline } = require(${JSON.stringify(`${DIST}/sql/statementDeadline.js`)});
const warnings = [];
process.on('warning', (warning) => warnings.push(warning.name));
(async () => {
  const pool = new pg.Pool({ connectionString: process.argv[1], max: 5 });
  const db = withStatementDeadline(fromPg(pool), 10000);
  const caller = new AbortController();
  await Promise.all(Array.from({ length: ${CONCURRENT} }, (_, i) =>
    db.query('SELECT $1::int AS i', [i], { signal: caller.signal })));
  await new Promise((resolve) => setTimeout(resolve, 50));
  await pool.end();
  process.stdout.write(JSON.stringify(warnings));
})();
`;

it(`${CONCURRENT} statements at once on one caller signal print no MaxListenersExceededWarning`, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', SCRIPT, t.url], {
    timeout: 20_000,
    cwd: __dirname,
  });
  expect(JSON.parse(stdout)).toEqual([]);
});

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

it(`${CONCURRENT} statements at once on one caller signal: one listener at most, none afterwards`, async () => {
  const db = withStatementDeadline(fromPg(pool), 10_000);
  const caller = new AbortController();
  const statements = Array.from({ length: CONCURRENT }, (_, i) =>
    db.query<{ i: number }>('SELECT $1::int AS i', [i], { signal: caller.signal }),
  );
  const whileRunning = listeners(caller.signal);
  const rows = await Promise.all(statements);
  expect(rows.map(([row]) => row?.i)).toEqual(Array.from({ length: CONCURRENT }, (_, i) => i));
  expect(whileRunning).toBeLessThanOrEqual(1);
  expect(listeners(caller.signal)).toBe(0);
});

it(`${CONCURRENT} statements given up at once when the caller aborts: each fails with its reason`, async () => {
  const db = withStatementDeadline(fromPg(pool), 10_000);
  const caller = new AbortController();
  const statements = Array.from({ length: CONCURRENT }, (_, i) =>
    db.query('SELECT pg_sleep(5), $1::int AS i', [i], { signal: caller.signal }).then(
      () => 'answered',
      (error: unknown) => error,
    ),
  );
  const reason = new Error('the caller gave up');
  caller.abort(reason);
  const outcomes = await Promise.all(statements);
  expect(outcomes.every((outcome) => outcome === reason)).toBe(true);
  expect(listeners(caller.signal)).toBe(0);
});

it(`${CONCURRENT} backoff waits and transaction deadlines on one signal: one listener at most`, async () => {
  const caller = new AbortController();
  const delays = Array.from({ length: CONCURRENT }, () => abortableDelay(1, caller.signal));
  const deadlines = Array.from({ length: CONCURRENT }, () =>
    transactionDeadline({ signal: caller.signal }, { committing: false }),
  );
  const whileWaiting = listeners(caller.signal);
  await Promise.all(delays);
  for (const deadline of deadlines) deadline.clear();
  expect(whileWaiting).toBeLessThanOrEqual(1);
  expect(listeners(caller.signal)).toBe(0);
});
