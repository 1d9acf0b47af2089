import {
  FerryError,
  INBOX_DEFAULTS,
  Inbox,
  InboxAdmissionRejectedError,
  InboxFingerprintConflictError,
  isFerryError,
  type PrismaClientLike,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, quietLogger, recorder } from './helpers';

describe('inbox acceptance', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('creates exactly one receipt when the same identity is accepted concurrently', async () => {
    const inboxes = [makeInbox(t.prisma), makeInbox(t.newClient()), makeInbox(t.newClient())];
    const input = message({ payload: { order: 1, lines: [1, 2] } });
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        inboxes[i % 3]!.accept({ ...input, payload: { lines: [1, 2], order: 1 } }),
      ),
    );
    expect(results.filter((r) => r.kind === 'accepted')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'duplicate')).toHaveLength(23);
    expect(new Set(results.map((r) => r.record.id)).size).toBe(1);
    const [row] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE message_id = $1',
      [input.messageId],
    );
    expect(row?.n).toBe(1);
  });

  it('returns the stored receipt with identity, fingerprint and a fresh cycle', async () => {
    const inbox = makeInbox(t.prisma);
    const input = { ...message(), headers: { traceparent: 'x' }, type: 'order.created', system: 'kafka' };
    const result = await inbox.accept(input);
    expect(result.kind).toBe('accepted');
    expect(result.record).toMatchObject({
      consumer: 'orders',
      messageId: input.messageId,
      tenantId: 'acme',
      status: 'PENDING',
      attempts: 0,
      lifetimeAttempts: 0,
      maxAttempts: 8,
      rowVersion: 1,
      headers: { traceparent: 'x' },
      messageType: 'order.created',
      system: 'kafka',
      payload: input.payload,
      replay: null,
    });
    expect(result.record.payloadFingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stores the messaging system that delivered a message, null when none is named, and refuses a malformed one', async () => {
    const inbox = makeInbox(t.prisma);
    const results = await inbox.acceptMany([
      message({ system: 'aws_sqs' }),
      message(),
      message({ system: null }),
      message({ system: '' }),
      message({ system: 's'.repeat(201) }),
      message({ system: 'rabbit\u0000mq' }),
      message({ system: 42 }),
    ]);
    expect(results.map((r) => r.kind)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'invalid',
      'invalid',
      'invalid',
      'invalid',
    ]);
    expect(results.slice(3)).toEqual(
      Array.from({ length: 4 }, () => expect.objectContaining({ code: 'FERRY_VALIDATION_FAILED' })),
    );
    const stored = await t.db.query<{ messaging_system: string | null }>(
      'SELECT messaging_system FROM ferry_inbox_receipts WHERE id = ANY($1::uuid[]) ORDER BY created_at, id',
      [results.slice(0, 3).map((r) => (r as { id: string }).id)],
    );
    expect(stored.map((r) => r.messaging_system).sort()).toEqual(['aws_sqs', null, null]);
  });

  it('reports a reused message id with a different payload as a conflict and keeps the original', async () => {
    const inbox = makeInbox(t.prisma);
    const input = message({ payload: { amount: 1 } });
    const first = await inbox.accept(input);
    const error = await inbox.accept({ ...input, payload: { amount: 2 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InboxFingerprintConflictError);
    expect(error).toMatchObject({ code: 'FERRY_FINGERPRINT_CONFLICT', existingId: first.record.id });
    const [result] = await inbox.acceptMany([{ ...input, payload: { amount: 2 } }]);
    expect(result).toMatchObject({ kind: 'conflict', id: first.record.id });
    const again = await inbox.accept(input);
    expect(again).toMatchObject({ kind: 'duplicate', record: { payload: { amount: 1 } } });
  });

  it('classifies a batch in order in one call: accepted, duplicates within and across batches, conflicts, invalid', async () => {
    const { events, observer } = recorder();
    const inbox = makeInbox(t.prisma, { observer });
    const existing = message();
    await inbox.accept(existing);
    const fresh = message();
    const results = await inbox.acceptMany([
      fresh,
      existing,
      { ...fresh },
      { ...existing, payload: { other: true } },
      { ...message(), tenantId: null },
      { ...message(), messageId: '' },
      { ...message(), payload: [] as never },
      { ...fresh, tenantId: 'other-tenant' },
    ]);
    expect(results.map((r) => r.kind)).toEqual([
      'accepted',
      'duplicate',
      'duplicate',
      'conflict',
      'invalid',
      'invalid',
      'invalid',
      'accepted',
    ]);
    expect(results[4]).toMatchObject({ code: 'FERRY_GLOBAL_SCOPE_REJECTED' });
    expect(results[5]).toMatchObject({ code: 'FERRY_VALIDATION_FAILED' });
    expect(results[0]).toEqual({ kind: 'accepted', id: (results[2] as { id: string }).id });
    expect(events.filter((e) => e.type === 'accepted')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'duplicate')).toHaveLength(3);
  });

  it('accepts global messages only with global: shared, in a scope of their own', async () => {
    const input = { ...message(), tenantId: null };
    await expect(makeInbox(t.prisma).accept(input)).rejects.toMatchObject({
      code: 'FERRY_GLOBAL_SCOPE_REJECTED',
    });
    const shared = makeInbox(t.prisma, { global: 'shared' });
    const global = await shared.accept(input);
    expect(global).toMatchObject({ kind: 'accepted', record: { tenantId: null } });
    const tenant = await shared.accept({ ...input, tenantId: 'acme' });
    expect(tenant.kind).toBe('accepted');
    expect(tenant.record.id).not.toBe(global.record.id);
  });

  it('limits the payload to maxPayloadBytes UTF-8 bytes of the JSON (default 262,144)', async () => {
    expect(makeInbox(t.prisma).maxPayloadBytes).toBe(INBOX_DEFAULTS.maxPayloadBytes);
    const inbox = makeInbox(t.prisma, { maxPayloadBytes: 20 });
    // {"s":"ééééé"} is 8 + 10 = 18 bytes but only 13 characters.
    const fits = { s: 'é'.repeat(6) }; // 20 bytes
    const over = { s: 'é'.repeat(6) + 'x' }; // 21 bytes
    const results = await inbox.acceptMany([message({ payload: fits }), message({ payload: over })]);
    expect(results[0]?.kind).toBe('accepted');
    expect(results[1]).toMatchObject({ kind: 'invalid', code: 'FERRY_PAYLOAD_TOO_LARGE' });
    await expect(inbox.accept(message({ payload: over }))).rejects.toMatchObject({
      code: 'FERRY_PAYLOAD_TOO_LARGE',
    });
  });

  it('refuses new work at maxPendingMessages as a failed acceptance but still answers duplicates', async () => {
    const db = await createTestDatabase();
    try {
      const inbox = makeInbox(db.prisma, { maxPendingMessages: 2 });
      const a = message();
      await inbox.acceptMany([a, message()]);
      const error = await inbox.acceptMany([message(), a]).catch((e: unknown) => e);
      expect(isFerryError(error, 'FERRY_ADMISSION_REJECTED')).toBe(true);
      expect((error as FerryError).retriable).toBe(true);
      expect(await inbox.acceptMany([a])).toEqual([expect.objectContaining({ kind: 'duplicate' })]);
      expect(await inbox.accept(a)).toMatchObject({ kind: 'duplicate' });
      const [row] = await db.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
      expect(row?.n).toBe(2);
    } finally {
      await db.drop();
    }
  });

  it('at maxPendingMessages answers the duplicates and invalid items of a mixed batch and refuses only its new ones', async () => {
    const db = await createTestDatabase();
    try {
      const { events, observer } = recorder();
      const inbox = makeInbox(db.prisma, { maxPendingMessages: 2, observer });
      const a = message();
      const [stored] = await inbox.acceptMany([a, message()]);
      const fresh = message();
      const error = await inbox
        .acceptMany([fresh, a, message({ payload: 'not an object' })])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxAdmissionRejectedError);
      expect(error).toMatchObject({ code: 'FERRY_ADMISSION_REJECTED', retriable: true });
      expect((error as InboxAdmissionRejectedError).results).toEqual([
        {
          kind: 'refused',
          code: 'FERRY_ADMISSION_REJECTED',
          reason: expect.stringContaining('maxPendingMessages'),
        },
        { kind: 'duplicate', id: (stored as { id: string }).id },
        expect.objectContaining({ kind: 'invalid', code: 'FERRY_VALIDATION_FAILED' }),
      ]);
      expect(events.filter((e) => e.type === 'duplicate')).toHaveLength(1);
      await expect(inbox.accept(fresh)).rejects.toBeInstanceOf(InboxAdmissionRejectedError);
      const [row] = await db.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
      expect(row?.n).toBe(2);
    } finally {
      await db.drop();
    }
  });

  it('checks admission, inserts and reads back the duplicates of a batch in one statement', async () => {
    const db = await createTestDatabase();
    try {
      const statements: string[] = [];
      const counting: PrismaClientLike = {
        $queryRawUnsafe: <T>(sql: string, ...values: unknown[]) => {
          statements.push(sql);
          return db.prisma.$queryRawUnsafe<T>(sql, ...values);
        },
        $executeRawUnsafe: (sql: string, ...values: unknown[]) => {
          statements.push(sql);
          return db.prisma.$executeRawUnsafe(sql, ...values);
        },
        $transaction: db.prisma.$transaction.bind(db.prisma) as PrismaClientLike['$transaction'],
      };
      const inbox = makeInbox(counting, { maxPendingMessages: 3 });
      const a = message();
      const roundTrips = async (run: () => Promise<unknown>): Promise<number> => {
        statements.length = 0;
        await run().catch(() => undefined);
        return statements.length;
      };

      expect(await roundTrips(() => inbox.acceptMany([a, message()]))).toBe(1);
      // A duplicate beside a new message, admitted (2 unfinished < 3).
      expect(await roundTrips(() => inbox.acceptMany([a, message()]))).toBe(1);
      // At the limit (3 unfinished): the new one refused, the duplicate still answered.
      expect(await roundTrips(() => inbox.acceptMany([message(), a]))).toBe(1);
      const [row] = await db.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
      expect(row?.n).toBe(3);
    } finally {
      await db.drop();
    }
  });

  it('fails the whole acceptance with a retriable error when the database is unavailable', async () => {
    const broken = {
      $queryRawUnsafe: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
      $executeRawUnsafe: () => Promise.reject(new Error('connect ECONNREFUSED')),
      $transaction: () => Promise.reject(new Error('connect ECONNREFUSED')),
    };
    const inbox = new Inbox(broken, { logger: quietLogger });
    await expect(inbox.acceptMany([message()])).rejects.toMatchObject({
      code: 'FERRY_DATABASE_UNAVAILABLE',
      retriable: true,
    });
  });
});
