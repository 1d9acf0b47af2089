/**
 * The class of review 70's Date and cursor findings, on every admin and audit-log argument of the
 * kind: a Date is used for its instant (never its own text), and a list cursor's position is one
 * PostgreSQL can take, else it is refused on `cursor` before any statement.
 */
import {
  createAuditLog,
  createOutboxAdmin,
  InboxAdmin,
  InboxPrivilegedAdmin,
  isFerryError,
} from '@ferry/core';
import { encodeListCursor, listingOf } from '../../src/listCursor';
import { useAdminDatabase } from '../../../../test-support/adminFixture';

const database = useAdminDatabase();

function refusal(error: unknown): unknown {
  return isFerryError(error)
    ? { code: error.code, field: (error as { field?: string }).field, sqlState: error.details.sqlState }
    : String(error);
}

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
  override toJSON(): string {
    return this.text;
  }
}

const LONG_AGO = Date.UTC(2000, 0, 1);
const FAR_AHEAD = Date.UTC(9999, 0, 1);

describe('a Date argument is used for its instant', () => {
  it("inbox purgeCompletedPayload's `before`", async () => {
    await database.fixture(); // COMPLETED receipts, completed an hour ago
    const scoped = new InboxAdmin(database.t().db).forTenant('acme');
    const answer = await scoped
      .purgeCompletedPayload({ before: new TextDate(LONG_AGO, 'infinity'), dryRun: true, actor: 'dates' })
      .catch(refusal);
    // On HEAD: { purged: 1 } (PostgreSQL was sent 'infinity').
    expect(answer).toEqual({ purged: 0 });
  });

  it("the audit log's `since`", async () => {
    const f = await database.fixture();
    await createOutboxAdmin(database.t().db).retry(f.failed, { actor: 'dates-since', dryRun: true });
    const log = createAuditLog(database.t().db);
    const listed = await log
      .list({ actor: 'dates-since', since: new TextDate(FAR_AHEAD, '-infinity') })
      .then((page) => page.items.length, refusal);
    const garbled = await log
      .list({ actor: 'dates-since', since: new TextDate(LONG_AGO, 'not a date') })
      .then((page) => page.items.length, refusal);
    // On HEAD: 1 (every entry since '-infinity'), then PostgreSQL's 22007 without a field.
    expect({ listed, garbled }).toEqual({ listed: 0, garbled: 1 });
  });

  it('the audit row and the cursor carry the instant, and a refused Date is shown as its instant', async () => {
    const admin = createOutboxAdmin(database.t().db).forTenant('acme');
    await admin.purgeSent({ before: new TextDate(LONG_AGO, 'infinity'), actor: 'dates-row', dryRun: true });
    const [row] = await database
      .t()
      .db.query<{ before: string }>(
        `SELECT arguments->>'before' AS before FROM ferry_operator_audit WHERE actor = 'dates-row'`,
      );
    const beyond = new TextDate(Date.UTC(10_000, 0, 1), '2020-01-01T00:00:00.000Z');
    const shown = await admin
      .list({ createdBefore: beyond })
      .catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    // On HEAD: 'infinity', and the refusal quotes "2020-01-01T00:00:00.000Z (Date)", a text the instant is not.
    expect({ before: row?.before, shown }).toEqual({
      before: '2000-01-01T00:00:00.000Z',
      shown:
        'invalid createdBefore: must be a valid Date from 0001-01-01 to 9999-12-31 (UTC), got +010000-01-01T00:00:00.000Z (Date)',
    });
  });
});

describe('a forged list cursor PostgreSQL cannot take is refused on `cursor`', () => {
  it("an outbox cursor's microseconds outside the instants a timestamp holds", async () => {
    const tenant = createOutboxAdmin(database.t().db).forTenant('acme');
    const listing = listingOf('outbox', 'acme', null, null, null);
    const answers = await Promise.all(
      [
        ['-999999999999999999', '1'], // 18 digits, before 4713 BC
        ['-9223372036854775808', '1'], // the smallest bigint
        ['0', '9223372036854775808'], // one past the largest bigint
      ].map((position) => tenant.list({ cursor: encodeListCursor(position, listing) }).catch(refusal)),
    );
    expect(answers).toEqual(
      Array(3).fill({ code: 'FERRY_VALIDATION_FAILED', field: 'cursor', sqlState: undefined }),
    );
  });

  it('an outbox cursor at the largest seq a bigint holds is taken', async () => {
    const tenant = createOutboxAdmin(database.t().db).forTenant('acme');
    const listing = listingOf('outbox', 'acme', null, null, null);
    const cursor = encodeListCursor(['0', '9223372036854775807'], listing);
    expect(await tenant.list({ cursor }).then((page) => page.nextCursor, refusal)).toBeNull();
  });

  it('an inbox cursor with more than its id, or an audit cursor beyond a bigint, is refused', async () => {
    const f = await database.fixture();
    const inbox = new InboxAdmin(database.t().db).forTenant('acme');
    const privileged = new InboxPrivilegedAdmin(database.t().db, { privilegedAdmin: true });
    const log = createAuditLog(database.t().db);
    const answers = [
      await inbox
        .list({
          cursor: encodeListCursor([f.tenant.dead.id, 'more'], listingOf('inbox', 'tenant:acme', null)),
        })
        .then(() => 'listed', refusal),
      await privileged
        .list({ cursor: encodeListCursor([f.tenant.dead.id, 'more'], listingOf('inbox', null, null)) })
        .then(() => 'listed', refusal),
      await log
        .list({
          cursor: encodeListCursor(['9223372036854775808'], listingOf('audit', null, null, null, null)),
        })
        .then(() => 'listed', refusal),
    ];
    // On HEAD: the inbox cursors are taken ('listed'), their extra part ignored.
    expect(answers).toEqual(
      Array(3).fill({ code: 'FERRY_VALIDATION_FAILED', field: 'cursor', sqlState: undefined }),
    );
  });
});
