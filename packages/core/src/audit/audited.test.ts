import { FerryError } from '../errors';
import { translateDbError } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { audited } from './audited';

/**
 * A root executor (ferry owns the transaction) whose transaction fails with `failure`; records
 * the statements run outside it (the `error` audit row).
 */
function failingRoot(failure: unknown): { db: SqlExecutor; statements: string[] } {
  const statements: string[] = [];
  const db: SqlExecutor = {
    inTransaction: false,
    query: async <T>(text: string) => {
      statements.push(text);
      return [{ id: '1' }] as T[];
    },
    execute: async (text: string) => {
      statements.push(text);
      return 1;
    },
    transaction: async () => {
      throw failure;
    },
  };
  return { db, statements };
}

/** Whether a failed action left its `error` row (an INSERT into the trail was sent). */
async function auditedFailure(failure: unknown): Promise<boolean> {
  const { db, statements } = failingRoot(failure);
  await expect(
    audited(db, {
      action: 'outbox.retry',
      scope: 'operator',
      ids: [],
      options: { actor: 'unit' },
      run: async () => undefined,
      summarize: () => ({ outcome: 'applied', results: [] }),
    }),
  ).rejects.toBe(failure);
  return statements.some((text) => /INSERT INTO ferry_operator_audit/.test(text));
}

function pgError(code: string, message = `failed with ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

const translated = (raw: unknown): FerryError => translateDbError(raw, 'outbox admin');

describe('audited: the error row of a failed action ferry ran in its own transaction', () => {
  // PostgreSQL answered and refused the statement: the session is there to take the row.
  it.each([
    ['lock_timeout', '55P03'],
    ['insufficient privilege', '42501'],
    ['deadlock', '40P01'],
    ['serialization failure', '40001'],
    ['read-only transaction', '25006'],
    ['disk full', '53100'],
    ['out of memory', '53200'],
    ['I/O error', '58030'],
    ['statement_timeout', '57014'],
    ['undefined column', '42703'],
    ['check violation', '23514'],
  ])('is written after a refusal by PostgreSQL: %s (%s)', async (_name, code) => {
    expect(await auditedFailure(translated(pgError(code)))).toBe(true);
  });

  // Prisma's write conflict (40001 or 40P01) as it may come without a SQLSTATE: P2034 and the driver
  // adapter's kind TransactionWriteConflict (an adapter that gives no originalCode), or P2034 alone.
  // PostgreSQL answered on a session still there: a failed action, audited, retriable (review:
  // operator plane, item 4; on HEAD the first was taken for a lost session and left no row).
  it.each([
    [
      'P2034 with kind TransactionWriteConflict',
      Object.assign(
        new Error('Transaction failed due to a write conflict or a deadlock. Please retry your transaction'),
        {
          code: 'P2034',
          meta: {
            driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'TransactionWriteConflict' } },
          },
        },
      ),
    ],
    ['P2034 alone', pgError('P2034', 'Transaction failed due to a write conflict or a deadlock')],
  ])('is written after a write conflict Prisma reports without a SQLSTATE: %s', async (_name, raw) => {
    const error = translated(raw);
    expect({ code: error.code, retriable: error.retriable, audited: await auditedFailure(error) }).toEqual({
      code: 'FERRY_DATABASE_UNAVAILABLE',
      retriable: true,
      audited: true,
    });
  });

  it('is written after a refusal of ferry (a state conflict)', async () => {
    expect(await auditedFailure(new FerryError('FERRY_STATE_CONFLICT', 'requeue requires DEAD'))).toBe(true);
  });

  // No session to write it on (the write would wait or fail), or the outcome is unknown (it would lie).
  it.each([
    ['connection failure', pgError('08006')],
    ['admin shutdown', pgError('57P01', 'terminating connection due to administrator command')],
    ['crash shutdown', pgError('57P02')],
    ['cannot connect now', pgError('57P03')],
    ['idle session timeout', pgError('57P05')],
    ['idle-in-transaction timeout', pgError('25P03')],
    ['too many connections', pgError('53300')],
    ['authentication failed', pgError('28P01')],
    ['ECONNREFUSED', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['ECONNRESET', pgError('ECONNRESET', 'read ECONNRESET')],
    ['a connection terminated', new Error('Connection terminated unexpectedly')],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
  ])('is not written when the session is gone: %s', async (_name, raw) => {
    expect(await auditedFailure(translated(raw))).toBe(false);
  });

  it('is not written when no connection came within the deadline, nor when the outcome is unknown', async () => {
    const noConnection = new FerryError(
      'FERRY_DATABASE_UNAVAILABLE',
      'no connection to the database within 100 ms',
      {
        details: { timeoutMs: 100 },
      },
    );
    const unknown = new FerryError('FERRY_OUTCOME_UNKNOWN', 'commit outcome unknown', {
      details: { outcome: 'unknown' },
    });
    expect([await auditedFailure(noConnection), await auditedFailure(unknown)]).toEqual([false, false]);
  });
});
