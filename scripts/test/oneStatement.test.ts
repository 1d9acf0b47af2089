/**
 * The suite's one-statement connections (a private cluster's query, the packaging tests' rowsOf)
 * against a backend that ends while the statement runs (a crash, a terminate: review 69's crash
 * recovery ends every backend). The statement fails with the server's answer; the connection's
 * `error` event that follows is not an unhandled error that fails whatever test file runs it (CI
 * stop 50: review69-claim-crash failed on "Unhandled error. Connection terminated unexpectedly"
 * from its waitUntil's query racing the crash).
 */
import { PrivateCluster } from '../../fault-tests/harness/privatePostgres';
import { rowsOf } from '../../packaging/brokers';

jest.setTimeout(60_000);

let cluster: PrivateCluster | undefined;
afterAll(async () => {
  await cluster?.destroy();
});

/**
 * What `run` (a statement on a connection of its own, as `pg_sleep`) ends with when its backend is
 * killed: PostgreSQL ends every other backend of a crashed server with a warning and no error
 * answer, so the statement learns of it by its connection's end alone.
 */
async function killedWhileRunning(run: (statement: string) => Promise<unknown>): Promise<string> {
  const marker = `onestatement_${Math.random().toString(36).slice(2)}`;
  const outcome = run(`SELECT pg_sleep(30) AS ${marker}`).then(
    () => 'resolved',
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  let pid: number | undefined;
  for (let i = 0; i < 100 && pid === undefined; i += 1) {
    const [row] = await cluster!.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE strpos(query, $1) > 0 AND pid <> pg_backend_pid()',
      [marker],
    );
    pid = row?.pid;
    if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (pid === undefined) throw new Error('the statement never started');
  process.kill(Number(pid), 'SIGKILL');
  const message = await outcome;
  // The connection's end is reported a few turns after the statement's failure.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await waitForRecovery();
  return message;
}

async function waitForRecovery(): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    try {
      await cluster!.query('SELECT 1');
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('the private cluster did not recover');
}

beforeAll(async () => {
  cluster = await PrivateCluster.create('onestatement');
});

test('PrivateCluster.query: a statement whose backend is killed fails, nothing unhandled', async () => {
  expect(await killedWhileRunning((statement) => cluster!.query(statement))).toMatch(/terminated/);
});

test('packaging rowsOf: a statement whose backend is killed fails, nothing unhandled', async () => {
  expect(await killedWhileRunning((statement) => rowsOf(cluster!.url(), statement))).toMatch(/terminated/);
});
