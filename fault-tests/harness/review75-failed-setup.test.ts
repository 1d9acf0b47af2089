/**
 * Review 75, the rest of the class of review75-own-setup.test.ts: every harness step that makes
 * something (a database, a folder, a mount) and then fails must remove what it made before it
 * throws, and throw the original error.
 *
 * - createTestDatabase() whose migration fails (here: a search_path naming no schema) after it
 *   connected a Prisma client to its new database.
 * - PrivateCluster.standbyOf() whose pg_basebackup fails (a primary that does not answer).
 * - BoundedFilesystem.mount() whose mount fails.
 */
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '../../test-support/database';
import { closedPort } from '../../test-support/closedPort';
import { BoundedFilesystem, PrivateCluster } from './privatePostgres';

jest.setTimeout(120_000);

function tmpEntries(prefix: string): Set<string> {
  return new Set(readdirSync(tmpdir()).filter((entry) => entry.startsWith(prefix)));
}

/** What `work` left in /tmp under `prefix` (removed here, so a failing run leaves nothing). */
async function leftBy(
  prefix: string,
  work: () => Promise<unknown>,
): Promise<{ failure: string; left: string[] }> {
  const before = tmpEntries(prefix);
  const failure = await work().then(
    () => 'none',
    (error: unknown) => String(error),
  );
  const left = [...tmpEntries(prefix)].filter((entry) => !before.has(entry));
  for (const entry of left) rmSync(path.join(tmpdir(), entry), { recursive: true, force: true });
  return { failure, left };
}

describe('review75: a harness set-up that fails removes what it made', () => {
  let cluster: PrivateCluster;

  beforeAll(async () => {
    cluster = await PrivateCluster.create('review75fs');
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('createTestDatabase() whose migration fails drops its database and rethrows the migration error', async () => {
    const saved = process.env.FERRY_DATABASE_URL;
    process.env.FERRY_DATABASE_URL = `${cluster.url('postgres')}?options=${encodeURIComponent('-c search_path=nowhere')}`;
    const failure = await createTestDatabase()
      .then(async (database) => {
        await database.drop();
        return 'created';
      })
      .catch((error: unknown) => String(error))
      .finally(() => {
        if (saved === undefined) delete process.env.FERRY_DATABASE_URL;
        else process.env.FERRY_DATABASE_URL = saved;
      });
    expect(failure).toMatch(/migrate could not create its table/);
    const rows = await cluster.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'ferry_t_%'`,
    );
    expect(rows).toEqual([]);
  });

  it('PrivateCluster.standbyOf() whose pg_basebackup fails leaves no folder in /tmp', async () => {
    const silent = { port: await closedPort() } as PrivateCluster;
    const { failure, left } = await leftBy('ferry-pg-review75standby-', () =>
      PrivateCluster.standbyOf(silent, 'review75standby').then((standby) => standby.destroy()),
    );
    expect(failure).toMatch(/pg_basebackup/);
    expect(left).toEqual([]);
  });

  it('BoundedFilesystem.mount() whose mount fails leaves no folder in /tmp', async () => {
    const { failure, left } = await leftBy('ferry-tmpfs-', () =>
      BoundedFilesystem.mount(-1).then((filesystem) => filesystem.unmount()),
    );
    expect(failure).toMatch(/mount/);
    expect(left).toEqual([]);
  });
});
