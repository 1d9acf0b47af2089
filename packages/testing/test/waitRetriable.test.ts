/**
 * waitForInboxRecord through a database that is not there yet, or goes away for a moment: a
 * retriable FerryError from get(id) is "not yet" (as waitUntil reads a probe that throws), and the
 * timeout names it; an error retrying cannot fix ends the wait at once.
 */
import { FerryError, InboxAdmin, type InboxRecord } from '@ferry/core';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { InboxRecordWaitTimeoutError, waitForInboxRecord } from '../src/inbox';

const completed = { id: 'r-1', status: 'COMPLETED', attempts: 1, lastError: null } as unknown as InboxRecord;

describe('waitForInboxRecord and errors of get(id)', () => {
  it('keeps polling through retriable errors and resolves once the record is there', async () => {
    let calls = 0;
    const scope = {
      get: async (): Promise<InboxRecord | null> => {
        calls += 1;
        if (calls <= 2) throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'connection refused');
        return completed;
      },
    };
    await expect(waitForInboxRecord(scope, 'r-1', { timeoutMs: 5_000, intervalMs: 1 })).resolves.toBe(
      completed,
    );
    expect(calls).toBe(3);
  });

  it('times out naming the last error when the database never answers (a real pool to a closed port)', async () => {
    const pool = listened(
      new Pool({
        connectionString: 'postgresql://postgres@127.0.0.1:1/none',
        connectionTimeoutMillis: 1_000,
      }),
    );
    try {
      const scope = new InboxAdmin(pool).forTenant('t1');
      const error: unknown = await waitForInboxRecord(scope, '00000000-0000-4000-8000-000000000001', {
        timeoutMs: 300,
        intervalMs: 10,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxRecordWaitTimeoutError);
      expect(error).toMatchObject({
        code: 'FERRY_TIMEOUT',
        last: null,
        lastError: expect.objectContaining({ code: 'FERRY_DATABASE_UNAVAILABLE' }),
      });
      expect((error as Error).message).toContain('FERRY_DATABASE_UNAVAILABLE');
    } finally {
      await pool.end();
    }
  });

  it('ends at once on an error retrying cannot fix', async () => {
    let calls = 0;
    const refused = new FerryError('FERRY_CLOSED', 'the admin was closed');
    const scope = {
      get: async (): Promise<InboxRecord | null> => {
        calls += 1;
        throw refused;
      },
    };
    await expect(waitForInboxRecord(scope, 'r-1', { timeoutMs: 5_000, intervalMs: 1 })).rejects.toBe(refused);
    expect(calls).toBe(1);
  });
});
