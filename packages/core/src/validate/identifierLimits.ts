/**
 * The one home of each identifier's length limit (UTF-16 code units, JavaScript's `length`), read
 * by emit, inbox acceptance, both admins' forTenant and the relay's check of claimed rows, so no
 * value one of them takes is refused by another. Every column is `text`; the bounds come from
 * the schema's CHECK and its btree indexes, whose entries must stay under 2,704 bytes:
 *
 * - tenantId 255: the inbox's identity index holds ('tenant:' || tenant_id, consumer,
 *   message_id); at 255 + 200 + 255 code units of 3 UTF-8 bytes each (the most one code unit
 *   takes) an entry is 2,137 bytes. emit refuses a longer tenant whatever its maxIdLength.
 * - eventType 255: the CHECK (length(event_type) BETWEEN 1 AND 255) on outbox_events; the
 *   inbox stores it as message_type (not indexed).
 * - consumer and system 200, messageId 255: the inbox's own names (consumer and message id in
 *   the identity index).
 */
export const IDENTIFIER_LIMITS = {
  tenantId: 255,
  eventType: 255,
  consumer: 200,
  messageId: 255,
  system: 200,
} as const;
