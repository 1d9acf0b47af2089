/**
 * Review 90 (failed first): what createHealth's readiness says of a transport probe that failed.
 *
 * What I did: readiness over a real database with a transport probe of my own (the README's
 * `{ name, check }`) whose check rejected with an error quoting its broker URL with the password
 * (a client that names the URL it could not reach), and one that rejected with a value that
 * cannot be read as text (a null-prototype object, as some libraries reject with).
 * What happened: the check's detail, which a NestJS terminus endpoint (FerryHealthIndicator)
 * serves as it is, quoted the password; the unreadable value made readiness() itself reject
 * (String() threw in the probe's catch), so the endpoint answered an error, not "down".
 * What should happen: the detail without the URL's user and password, as every ferry log line and
 * transport event (describeCause / stripUrlCredentials); an unreadable failure is a down check.
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

describe('readiness of a transport probe that failed', () => {
  it("does not show the password of a URL the probe's error quotes", async () => {
    const ready = await createHealth({
      db: t.db,
      checkSchema: false,
      transports: [
        {
          name: 'broker',
          check: () => Promise.reject(new Error('cannot reach amqp://billing:hunter2@mq.internal:5672/')),
        },
      ],
    }).readiness();
    const probe = ready.checks.find((check) => check.name === 'transport broker');
    expect(probe?.status).toBe('down');
    expect(probe?.detail).not.toContain('hunter2');
    expect(probe?.detail).toContain('mq.internal');
  });

  it('reports a failure that cannot be read as text as down, readiness itself resolving', async () => {
    const ready = await createHealth({
      db: t.db,
      checkSchema: false,
      transports: [{ name: 'odd', check: () => Promise.reject(Object.create(null) as object) }],
    }).readiness();
    expect(ready.status).toBe('down');
    expect(ready.checks.map((check) => `${check.name}:${check.status}`)).toEqual([
      'database:up',
      'transport odd:down',
    ]);
  });
});
