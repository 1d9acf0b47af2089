/**
 * Review 70: admin arguments the checks let through to PostgreSQL, or past what the documents say.
 *
 * 1. An outbox list cursor is base64url JSON of (created_at in microseconds, seq) and an unkeyed
 *    SHA-256 digest of the listing (src/listCursor.ts), so anyone with the source can write one for
 *    their own listing. decodeCursor takes up to 19 digits for each number (/^\d{1,19}$/), more than
 *    a bigint holds (9223372036854775807): PostgreSQL refuses it (22003) and the caller gets its
 *    message as a FERRY_VALIDATION_FAILED without `field` (the 19 digits shown as
 *    "[redacted-card]"). The audit log's cursor takes at most 18 digits for the same reason.
 *    Contract: docs/outbox.md "every argument's value is checked ... before anything runs ...
 *    refused showing the value received"; a cursor not returned by list() is refused on `cursor`.
 *    Fix: bound the digits (18, or compare with the bigint range) in decodeCursor.
 * 2. dateArgument checks a Date's instant through Date.prototype.getTime, then the statements send
 *    the object's own `toISOString()`: a Date subclass (or a Date whose toISOString was replaced)
 *    sends whatever that returns: 'infinity' purges every SENT row whatever `before` says (and the
 *    audit row records `before: "infinity"`); other text is PostgreSQL's 22007 without `field`.
 *    Fix: have dateArgument return `new Date(time)` (a plain copy) and use only that.
 * 3. markFailed's reason is checked at 1-4,000 characters, then redacted, and the redacted text is
 *    checked again as the audit reason (resolveAudit, at most 4,000). Redaction lengthens short
 *    secrets (`x@y.io` becomes `[redacted-email]`), so a 3,997-character reason of the documented
 *    range is refused: FERRY_VALIDATION_FAILED "invalid reason: must be a non-empty string of at most
 *    4000 characters, got \"[redacted-email] ...\"", a text the caller never sent. Contract:
 *    docs/outbox.md "`markFailed(id, reason, audit?)` | PENDING → FAILED with `last_error = reason`
 *    (1–4,000 chars, redacted ...)". Why it matters: an operator pasting a broker's error listing
 *    addresses or tokens cannot mark the event FAILED, and the error names a value they did not
 *    give. Fix: bound the redacted text at 4,000 (as the relay's errors are, MAX_OUTBOX_ERROR_CHARS)
 *    instead of checking it again as a caller's argument.
 * 4. markFailed's `audit` takes `reason` (MARK_FAILED_KEYS) and drops it silently: the reason
 *    argument replaces it. Contract: docs/outbox.md "`markFailed`'s `audit` takes `actor` and
 *    `dryRun` (its reason is the second argument)" and "any other is refused before any statement
 *    runs", the rule that keeps an ignored key from losing what the caller meant (a ticket number
 *    given as the audit reason is nowhere in the trail). Fix: refuse it, or document and store it.
 */
import { createOutboxAdmin, emitMany, isFerryError } from '@ferry/core';
import { encodeListCursor, listingOf } from '../src/listCursor';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

function refusal(error: unknown): unknown {
  return isFerryError(error)
    ? { code: error.code, field: (error as { field?: string }).field, sqlState: error.details.sqlState }
    : String(error);
}

it('an outbox cursor whose position a bigint cannot hold is refused on `cursor`, not by PostgreSQL', async () => {
  await database.fixture();
  const tenant = createOutboxAdmin(database.t().db).forTenant('acme');
  const listing = listingOf('outbox', 'acme', null, null, null);
  const seq = encodeListCursor(['0', '9999999999999999999'], listing);
  const micros = encodeListCursor(['9999999999999999999', '1'], listing);
  const results = [
    await tenant.list({ cursor: seq }).catch(refusal),
    await tenant.list({ cursor: micros }).catch(refusal),
  ];
  // On HEAD: { code: 'FERRY_VALIDATION_FAILED', field: undefined, sqlState: '22003' } twice
  // ("outbox list failed: value \"[redacted-card]\" is out of range for type bigint").
  expect(results).toEqual([
    { code: 'FERRY_VALIDATION_FAILED', field: 'cursor', sqlState: undefined },
    { code: 'FERRY_VALIDATION_FAILED', field: 'cursor', sqlState: undefined },
  ]);
});

/** A Date whose text form is not its instant (a subclass, as a date library may ship). */
class TextDate extends Date {
  constructor(
    time: number,
    private readonly text: string,
  ) {
    super(time);
  }
  override toISOString(): string {
    return this.text;
  }
}

it('a Date argument is used for its instant: purgeSent never deletes rows published after `before`', async () => {
  await database.fixture(); // the tenant's SENT rows, published now
  const admin = createOutboxAdmin(database.t().db).forTenant('acme');
  const longAgo = Date.UTC(2000, 0, 1);
  const purged = await admin.purgeSent({ before: new TextDate(longAgo, 'infinity'), dryRun: true });
  const listed = await admin.list({ createdBefore: new TextDate(longAgo, 'not a date') }).catch(refusal);
  // On HEAD: purged { deleted: 2 } (every SENT row of the tenant, all published now: PostgreSQL was
  // sent 'infinity'), and listed is PostgreSQL's 22007 "invalid input syntax for type timestamp with
  // time zone" as FERRY_VALIDATION_FAILED without a field.
  expect({ purged, listed }).toEqual({ purged: { deleted: 0 }, listed: { items: [], nextCursor: null } });
});

it('markFailed takes a reason of the documented 1-4,000 characters and stores at most 4,000', async () => {
  const db = database.t().db;
  const {
    ids: [id],
  } = await emitMany(db, [{ type: 'review70.reason', payload: {}, tenantId: 'acme' }]);
  const reason = 'x@y.io '.repeat(571); // 3,997 characters, within the documented 1-4,000
  expect(reason.length).toBeLessThanOrEqual(4_000);
  const result = await createOutboxAdmin(db)
    .forTenant('acme')
    .markFailed(id!, reason, { actor: 'review70-reason' })
    .catch((error: unknown) => (isFerryError(error) ? { code: error.code, message: error.message } : error));
  // On HEAD: { code: 'FERRY_VALIDATION_FAILED', message: 'invalid reason: must be a non-empty string
  // of at most 4000 characters, got "[redacted-email] [redacted-email] ...' }.
  expect(result).toEqual({ id, outcome: 'applied' });
  const [row] = await db.query<{ error: number; audit: number }>(
    `SELECT (SELECT length(last_error) FROM outbox_events WHERE id = $1::uuid) AS error,
            (SELECT length(reason) FROM ferry_operator_audit WHERE actor = 'review70-reason') AS audit`,
    [id],
  );
  expect({ error: row!.error <= 4_000, audit: row!.audit <= 4_000 }).toEqual({ error: true, audit: true });
});

it("markFailed's audit options refuse `reason` (documented: actor and dryRun), never drop it", async () => {
  const db = database.t().db;
  const {
    ids: [id],
  } = await emitMany(db, [{ type: 'review70.audit-reason', payload: {}, tenantId: 'acme' }]);
  const audit = { actor: 'review70-key', reason: 'JIRA-7070' } as { actor: string };
  const answer = await createOutboxAdmin(db)
    .forTenant('acme')
    .markFailed(id!, 'poison payload', audit)
    .catch(refusal);
  // On HEAD: { id, outcome: 'applied' }, and 'JIRA-7070' is nowhere in the trail.
  expect(answer).toEqual({ code: 'FERRY_VALIDATION_FAILED', field: 'reason', sqlState: undefined });
  const [row] = await db.query<{ status: string }>(`SELECT status FROM outbox_events WHERE id = $1::uuid`, [
    id,
  ]);
  expect(row?.status).toBe('PENDING');
});
