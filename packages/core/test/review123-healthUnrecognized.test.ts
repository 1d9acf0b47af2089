/**
 * Review 123: readiness's schema check said `ready` and nothing more when the migrations table
 * records migrations this version does not ship (a newer ferry applied them: a rollback
 * mid-deploy, an older pod still running). checkSchema() returns them ({ unrecognized }, review
 * 115) and `ferry check` names them; health dropped them, so the one place an operator looks
 * during a rollback did not say the schema is ahead of the code. They fail nothing: the check
 * stays up, its detail counts them and says where they are named.
 */
import { createHealth } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('readiness and details say the schema is ready and count the migrations of a newer version', async () => {
  const health = createHealth({ db: t.db });
  expect((await health.readiness()).checks).toContainEqual({ name: 'schema', status: 'up', detail: 'ready' });
  await t.db.execute(
    `INSERT INTO ferry_schema_migrations (name, checksum)
     SELECT '9999_review123_' || lpad(n::text, 4, '0'), 'x' FROM generate_series(1, 1000) AS n`,
  );
  const expected = {
    name: 'schema',
    status: 'up',
    detail:
      'ready; 1000 recorded migration(s) this version does not ship (applied by a newer one; ' +
      '`ferry check` names them)',
  };
  const ready = await health.readiness();
  expect(ready).toMatchObject({ status: 'up' });
  expect(ready.checks).toContainEqual(expected);
  expect((await health.details()).checks).toContainEqual(expected);
});
