import { createEmitter, fromPrisma, type OutboxEvent, type SqlExecutor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function exists(db: SqlExecutor, ids: readonly string[]): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return row?.n ?? 0;
}

describe('the inserted event says whether the rows are committed', () => {
  it("inside the caller's transaction it reports committed: false, and the rows vanish with a rollback", async () => {
    const calls: OutboxEvent[] = [];
    const emitter = createEmitter({ observer: (e) => void calls.push(e) });
    let ids: string[] = [];
    await expect(
      t.prisma.$transaction(async (tx) => {
        ids = (await emitter.emitMany(tx, [{ type: 'rolled.back', payload: {} }])).ids;
        throw new Error('the caller rolls back');
      }),
    ).rejects.toThrow('the caller rolls back');
    expect(calls).toEqual([{ type: 'inserted', ids, types: ['rolled.back'], committed: false }]);
    expect(await exists(t.db, ids)).toBe(0);
  });

  it('when emitMany runs its own transaction it reports committed: true once other connections see the rows', async () => {
    const other = fromPrisma(t.newClient({ max: 1 }));
    const seen: Array<Promise<{ committed: boolean; visible: number }>> = [];
    const emitter = createEmitter({
      observer: (e) => {
        if (e.type !== 'inserted') return;
        seen.push(exists(other, e.ids).then((visible) => ({ committed: e.committed, visible })));
      },
    });
    await emitter.emitMany(t.prisma, [
      { type: 'own.tx', payload: { a: 1 } },
      { type: 'own.tx', payload: { a: 2 } },
    ]);
    expect(await Promise.all(seen)).toEqual([{ committed: true, visible: 2 }]);
  });
});
