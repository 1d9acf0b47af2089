/**
 * Makes every receipt insert of the test database sleep `seconds` (a row trigger), so that the
 * size of an acceptance batch decides whether its one statement meets a deadline.
 */
import { INBOX_TABLE, type SqlExecutor } from '@ferry/core';

export async function slowReceiptInserts(db: SqlExecutor, seconds: number): Promise<void> {
  await db.query(`
    CREATE FUNCTION slow_receipt() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_sleep(${Number(seconds)}); RETURN NEW; END $$`);
  await db.query(
    `CREATE TRIGGER slow_receipt BEFORE INSERT ON ${INBOX_TABLE} FOR EACH ROW EXECUTE FUNCTION slow_receipt()`,
  );
}
