/**
 * Review finding (failed first): a tenant id emit() stored and published with the default limits
 * (up to 255 characters, 512 with maxIdLength) was one every ferry inbox refused (tenantId over
 * 200 characters: `invalid`, dead-lettered by the transports) and one the inbox admin could not
 * name (forTenant refused it) while the outbox admin could; an event type emit() takes (255) was
 * refused as the inbox's message type (200). One limit per identifier (IDENTIFIER_LIMITS) now
 * serves emit, acceptance, both admins and the relay's check of claimed rows.
 */
import { createEmitter, createOutboxAdmin, emit, FerryValidationError, InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

describe('one tenant id and event type length across emit, acceptance and the admins', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('a tenant id emit() accepts with default limits is accepted by the inbox', async () => {
    const tenantId = `tenant-${'x'.repeat(220)}`; // 227 characters: under emit's default 255
    const { id } = await emit(t.db, { type: 'order.created', tenantId, payload: {} });
    expect(await createOutboxAdmin(t.db).forTenant(tenantId).get(id)).not.toBeNull();

    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const [result] = await inbox.acceptMany([message({ tenantId, messageId: id })]);
    // Before: { kind: 'invalid', reason: 'tenantId is 227 characters; the limit is 200' }: the
    // event ferry itself published was dead-lettered by every consumer.
    expect(result).toMatchObject({ kind: 'accepted' });
    expect(() => new InboxAdmin(t.prisma).forTenant(tenantId)).not.toThrow();
  });

  it('the longest tenant id of 3-byte characters is stored by emit and the inbox alike', async () => {
    // 255 code units of 3 UTF-8 bytes: the widest entry of the inbox's identity index.
    const tenantId = '界'.repeat(255);
    const consumer = '界'.repeat(200);
    const { id } = await emit(t.db, { type: 'order.created', tenantId, payload: {} });
    const inbox = makeInbox(t.prisma, { handlers: { [consumer]: async () => undefined } });
    const [result] = await inbox.acceptMany([message({ tenantId, consumer, messageId: '界'.repeat(255) })]);
    expect(result).toMatchObject({ kind: 'accepted' });
    expect(await createOutboxAdmin(t.db).forTenant(tenantId).get(id)).not.toBeNull();
    expect((await new InboxAdmin(t.prisma).forTenant(tenantId).list()).records).toHaveLength(1);
  });

  it('a tenant id longer than the inbox takes is refused by emit even at maxIdLength 512, and by both admins', async () => {
    const tenantId = 't'.repeat(256);
    const emitter = createEmitter({ limits: { maxIdLength: 512 } });
    await expect(emitter.emit(t.db, { type: 'order.created', tenantId, payload: {} })).rejects.toMatchObject({
      field: 'tenantId',
    });
    // Other ids keep maxIdLength's 512.
    await expect(
      emitter.emit(t.db, { type: 'order.created', correlationId: 'c'.repeat(512), payload: {} }),
    ).resolves.toMatchObject({ id: expect.any(String) });
    expect(() => createOutboxAdmin(t.db).forTenant(tenantId)).toThrow(FerryValidationError);
    expect(() => new InboxAdmin(t.prisma).forTenant(tenantId)).toThrow(FerryValidationError);
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const [result] = await inbox.acceptMany([message({ tenantId })]);
    expect(result).toMatchObject({ kind: 'invalid' });
  });

  it('an event type emit() accepts (up to 255 characters) is accepted by the inbox as the message type', async () => {
    const type = `order.${'created'.repeat(35)}`.slice(0, 255); // emit's maxTypeLength, the schema's CHECK
    const { id } = await emit(t.db, { type, payload: {} });
    const inbox = makeInbox(t.prisma, { global: 'shared', handlers: { orders: async () => undefined } });
    // Every transport hands acceptance the event's type (x-ferry-event-type) as `type`.
    const [result] = await inbox.acceptMany([message({ tenantId: null, messageId: id, type })]);
    expect(result).toMatchObject({ kind: 'accepted' });
  });
});
