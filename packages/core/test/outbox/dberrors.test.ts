import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createOutboxAdmin, createRelay, emit, fromPrisma, isFerryError } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';
import { REGISTER_TS } from '../../../../test-support/registerTs';
import { silent, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await t.drop();
});

describe('database errors at the boundary', () => {
  it('a missing table surfaces as FERRY_SCHEMA_NOT_READY from emit, relay and admin', async () => {
    const relay = createRelay({ db: t.db, publisher: new InMemoryPublisher(), logger: silent });
    for (const attempt of [
      () => emit(t.db, { type: 't', payload: {} }),
      () => relay.runOnce(),
      () => createOutboxAdmin(t.db).stats(),
    ]) {
      await expect(attempt()).rejects.toMatchObject({
        code: 'FERRY_SCHEMA_NOT_READY',
        retriable: false,
        details: { sqlState: '42P01' },
      });
    }
  });

  it('an unreachable database is FERRY_DATABASE_UNAVAILABLE and retriable; the relay loop keeps going', async () => {
    const unreachable = prismaFor('postgresql://postgres@127.0.0.1:1/none');
    try {
      const error = await createOutboxAdmin(fromPrisma(unreachable))
        .stats()
        .catch((e: unknown) => e);
      expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(true);
      expect(error).toMatchObject({ retriable: true });
      const relay = createRelay({
        db: fromPrisma(unreachable),
        publisher: new InMemoryPublisher(),
        logger: silent,
        options: { errorBackoff: 1 },
      });
      relay.start();
      await waitFor(() => relay.cycles >= 3);
      await relay.close();
    } finally {
      await unreachable.$disconnect();
    }
  });
});

describe('the unclassified database error line', () => {
  // Logged on ferry's own 'ferry.db' logger (stderr): read in a child process.
  it('is redacted like every error text ferry logs', () => {
    const dbErrors = path.join(__dirname, '../../src/sql/dbErrors.ts');
    const script = `
      const { translateDbError } = require(${JSON.stringify(dbErrors)});
      const error = Object.assign(new Error('bad row: password=hunter2 card 4111 1111 1111 1111'), { code: 'XX999' });
      translateDbError(error, 'outbox emit');`;
    const child = spawnSync(process.execPath, ['-r', REGISTER_TS, '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toContain('unclassified database error');
    expect(child.stderr).toContain('password=[redacted]');
    expect(child.stderr).not.toMatch(/hunter2|4111 1111/);
  });
});
