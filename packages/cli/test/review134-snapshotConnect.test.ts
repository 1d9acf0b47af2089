/**
 * Review 134: the reads that print exact payloads (`show`, `list --json`: one REPEATABLE READ
 * snapshot, exactJson.ts) wait for their connection no longer than `--statement-timeout`, as every
 * other command does: on a server that never completes the connection (a network blackhole) they
 * waited for the pool's 10 s connect bound and answered "Connection terminated due to connection
 * timeout", where `stats` or a text `list` answered "no connection ... within 1000 ms".
 */
import { randomUUID } from 'node:crypto';
import { runCli } from '@ferry/cli';
import { serverUrl } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { captureIo } from './io';

/** Below the CLI's 10 s connect bound: a command still running then waits for a connection. */
const BEFORE_CONNECT_BOUND_MS = 8_000;

async function silent(argv: string[]) {
  const proxy = await halfOpenProxy(new URL(serverUrl()));
  proxy.silence();
  try {
    const io = captureIo();
    const url = proxy.url(serverUrl());
    const run = runCli([...argv, '--database-url', url, '--statement-timeout', '100ms', '--json'], io, {});
    return { outcome: await outcomeWithin(run, BEFORE_CONNECT_BOUND_MS), ...io };
  } finally {
    proxy.close();
  }
}

describe('review 134: a snapshot read on a server that never completes the connection', () => {
  const id = randomUUID();
  it.each([
    ['outbox show', ['outbox', 'show', id]],
    ['outbox list --json', ['outbox', 'list']],
    ['inbox show', ['inbox', 'show', id, '--tenant', 'acme']],
    ['inbox list --json', ['inbox', 'list', '--global']],
  ])('%s is FERRY_DATABASE_UNAVAILABLE within --statement-timeout', async (_, argv) => {
    const run = await silent(argv);
    expect(run.outcome).toEqual({ value: 1 });
    const { error } = JSON.parse(run.lines[0]!) as { error: { code: string; message: string } };
    expect(error.code).toBe('FERRY_DATABASE_UNAVAILABLE');
    expect(error.message).toMatch(/within 100 ms/);
  });
});
