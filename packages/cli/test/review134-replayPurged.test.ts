/**
 * Review 134: a replay of a receipt whose payload was purged is refused for that reason whatever
 * version it names. Asked at the version observed before the purge (an operator lists, retention
 * runs `purge-payloads`, which moves the version on, then the operator replays), it was refused as
 * "expected COMPLETED at version 2, found COMPLETED at version 3" with the hint "list it again and
 * act on its current status and version", which cannot succeed: at version 3 came the refusal that
 * no state brings the payload back. README (Errors): a replay whose source's payload was purged
 * gets that hint. The library's error names the purge (details.reason REPLAY_PAYLOAD_PURGED).
 */
import { InboxAdmin, InboxStateConflictError, REPLAY_PAYLOAD_PURGED } from '@ferry/core';
import { randomUUID } from 'node:crypto';
import { useCliDatabase } from './cliDatabase';
import { insertReceipt } from './rows';

const database = useCliDatabase();

describe('review 134: a replay of a purged receipt at the version seen before the purge', () => {
  it('is refused as purged by the library, at either version', async () => {
    const done = await insertReceipt(database.test.db, { status: 'COMPLETED', version: 2 });
    const admin = new InboxAdmin(database.test.db).forTenant('acme');
    expect(await admin.purgeCompletedPayload({ before: new Date(Date.now() + 1_000) })).toEqual({
      purged: 1,
    });
    for (const expectedVersion of [2, 3]) {
      const refused = await admin
        .replay({
          id: done.id,
          expectedVersion,
          requestId: randomUUID(),
          targetConsumer: 'work',
          actor: 'ops',
          reason: 'rebuild',
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InboxStateConflictError);
      expect((refused as InboxStateConflictError).details).toMatchObject({
        reason: REPLAY_PAYLOAD_PURGED,
        status: 'COMPLETED',
        rowVersion: 3,
      });
    }
  });

  it('ferry inbox replay gives the purge hint, not "act on its current version"', async () => {
    const done = await insertReceipt(database.test.db, { status: 'COMPLETED', version: 2 });
    expect((await database.cli('inbox', 'purge-payloads', '--tenant', 'acme', '--before', '0s')).code).toBe(
      0,
    );
    const replay = `inbox replay ${done.id} --expected-version 2 --target-consumer work --tenant acme`;
    const run = await database.cli(...replay.split(' '), '--reason', 'rebuild');
    expect(run.code).toBe(1);
    expect(run.errors[0]).toContain(REPLAY_PAYLOAD_PURGED);
    expect(run.errors.at(-1)).toMatch(/^hint: the receipt's payload was purged/);
  });
});
