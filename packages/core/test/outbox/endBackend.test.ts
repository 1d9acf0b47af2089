/**
 * Ending the backend of a claim the relay gave up on (abandonedClaims.ts) ends that backend and
 * no other session of the server: not the caller's, not one of another database, not one that
 * started after the statement was sent (a process id taken over).
 */
import { Client, Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
const clients: Client[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await t.drop();
});

async function session(url: string): Promise<{ client: Client; pid: number; ended: Promise<unknown> }> {
  const client = new Client({ connectionString: url });
  clients.push(client);
  const ended = new Promise((resolve) => client.on('error', resolve));
  await client.connect();
  const [row] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  return { client, pid: row!.pid, ended };
}

async function alive(pid: number): Promise<boolean> {
  const rows = await t.db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1::int', [pid]);
  return rows.length === 1;
}

describe('endBackend', () => {
  it('ends the one backend named, and no other session of the server', async () => {
    // Bystanders first (the sessions a statement scanning every backend would come to first).
    const bystanders = [await session(t.url), await session(serverUrl()), await session(t.url)];
    const target = await session(t.url);
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    try {
      const store = relayStore(fromPg(pool));
      expect(await store.endBackend(target.pid, 0, 5_000)).toBe(true);
      await target.ended;
      expect(await alive(target.pid)).toBe(false);
      for (const bystander of bystanders) {
        expect((await bystander.client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      }
      // Already gone: gone.
      expect(await store.endBackend(target.pid, 0, 5_000)).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it("leaves alone another database's or another role's backend under that process id (a pid that was never this pool's: pgbouncer's)", async () => {
    const role = `ferry_other_${process.pid}_${Date.now()}`;
    await t.db.query(`CREATE ROLE ${role} LOGIN`);
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    try {
      const url = new URL(t.url);
      url.username = role;
      const otherDatabase = await session(serverUrl());
      const otherRole = await session(url.toString());
      const store = relayStore(fromPg(pool));
      // Sent 0 ms ago: only the database and the role tell these sessions apart from the pool's.
      await store.endBackend(otherDatabase.pid, 0, 1_000);
      await store.endBackend(otherRole.pid, 0, 1_000);
      expect(await alive(otherDatabase.pid)).toBe(true);
      expect(await alive(otherRole.pid)).toBe(true);
      expect((await otherRole.client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await otherRole.client.end();
    } finally {
      await pool.end();
      await t.db.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('leaves alone a backend that started after the statement was sent', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    try {
      const later = await session(t.url);
      // Sent 60 s ago: this session is younger, so it cannot be the one that ran the statement.
      expect(await relayStore(fromPg(pool)).endBackend(later.pid, 60_000, 5_000)).toBe(true);
      expect((await later.client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });
});
