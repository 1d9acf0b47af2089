// Review finding (failed first): a component given `logger` still wrote the "unclassified database
// error" warning through a module-level default logger (pino on stderr): the component's logger
// never saw it. The warning now goes to the logger of the component whose statement failed.
import { createEmitter, createInbox, createRelay, type SqlExecutor } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { writtenLog } from '../../../../test-support/writtenLog';

const WARNING = 'unclassified database error';
// A SQLSTATE of a class no translation knows: an unclassified failure, whatever entries are added.
const RAISE = `CREATE FUNCTION ferry_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN RAISE EXCEPTION 'refused by a test trigger' USING ERRCODE = 'FY001'; END $$`;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute(RAISE);
  for (const table of ['outbox_events', 'ferry_inbox_receipts']) {
    await t.db.execute(
      `CREATE TRIGGER ferry_test_refuse BEFORE INSERT OR UPDATE ON ${table}
       FOR EACH ROW EXECUTE FUNCTION ferry_test_refuse()`,
    );
  }
});
afterAll(async () => {
  await t.drop();
});

describe('the unclassified database error warning goes to the component logger', () => {
  it('inbox acceptance', async () => {
    const log = writtenLog();
    const inbox = createInbox(t.prisma, {
      global: 'shared',
      logger: log.logger,
      handlers: { c: async () => undefined },
    });
    await expect(
      inbox.acceptMany([{ consumer: 'c', messageId: 'm-1', tenantId: null, payload: {} }]),
    ).rejects.toMatchObject({ code: 'FERRY_DATABASE_ERROR' });
    await inbox.close();
    expect(log.text()).toContain(WARNING);
  });

  it('emit through an emitter given a logger', async () => {
    const log = writtenLog();
    const emitter = createEmitter({ logger: log.logger });
    await expect(
      t.db.transaction((tx: SqlExecutor) => emitter.emit(tx, { type: 'refused', payload: {} })),
    ).rejects.toMatchObject({ code: 'FERRY_DATABASE_ERROR' });
    expect(log.text()).toContain(WARNING);
  });

  it('the relay', async () => {
    await t.db.execute('ALTER TABLE outbox_events DISABLE TRIGGER ferry_test_refuse');
    await t.db.transaction((tx: SqlExecutor) => createEmitter().emit(tx, { type: 'refused', payload: {} }));
    await t.db.execute('ALTER TABLE outbox_events ENABLE TRIGGER ferry_test_refuse');
    const log = writtenLog();
    const relay = createRelay({ db: t.db, publisher: new InMemoryPublisher(), logger: log.logger });
    await expect(relay.runOnce()).rejects.toMatchObject({ code: 'FERRY_DATABASE_ERROR' });
    await relay.close();
    expect(log.text()).toContain(WARNING);
  });
});
