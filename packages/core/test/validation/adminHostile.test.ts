import { randomUUID } from 'node:crypto';
import { createOutboxAdmin, FerryValidationError, InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const NUL = 'a\u0000b';
const LONE = 'a\ud800';

async function failureOf(work: () => unknown): Promise<unknown> {
  try {
    await work();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('admin arguments are validated as text before any SQL', () => {
  const cases: Array<[string, () => unknown, string]> = [
    ['outbox markFailed reason', () => createOutboxAdmin(t.db).markFailed(randomUUID(), NUL), 'reason'],
    ['outbox forTenant', () => createOutboxAdmin(t.db).forTenant(LONE), 'tenantId'],
    ['inbox forTenant', () => new InboxAdmin(t.prisma).forTenant(NUL), 'tenantId'],
    [
      'inbox requeue reason',
      () =>
        new InboxAdmin(t.prisma)
          .forTenant('acme')
          .requeue({ id: randomUUID(), expectedVersion: 1, reason: NUL, actor: 'ops' }),
      'reason',
    ],
    [
      'inbox requeue actor',
      () =>
        new InboxAdmin(t.prisma)
          .forTenant('acme')
          .requeue({ id: randomUUID(), expectedVersion: 1, reason: 'fixed', actor: LONE }),
      'actor',
    ],
  ];

  it.each(cases)(
    '%s: NUL or a lone surrogate is a validation error with rule invalid_text',
    async (_n, work, field) => {
      const error = await failureOf(work);
      expect(error).toBeInstanceOf(FerryValidationError);
      expect(error).toMatchObject({
        code: 'FERRY_VALIDATION_FAILED',
        field,
        details: { rule: 'invalid_text' },
      });
    },
  );
});
