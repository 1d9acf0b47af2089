/**
 * Lease renewals a slow database leaves unanswered: a statement trigger on the leased table makes
 * each renewal statement (the text every renewal shares, `SET lease_expires_at = now()`) sleep on
 * the server, holding its connection, until the test releases them (each renewal is numbered in
 * the order it reached the server). `which`: every renewal, or the first only (one pooled
 * connection silent, the others fine).
 */
import type { SqlExecutor } from '@ferry/core';
import { waitUntil } from '@ferry/testing';

/** The text every lease renewal statement holds (inbox renewLease / renewQueued, outbox renewLease). */
export const RENEWAL_TEXT = 'SET lease_expires_at = now()';

export interface HeldRenewals {
  /** Renewal statements that reached the server so far. */
  sent(): Promise<number>;
  /** Renewal statements held (sleeping on the server) now. */
  held(): Promise<number>;
  /** Lets the renewals sent `n`th and before go on. */
  releaseUpTo(n: number): Promise<void>;
  /** Lets every held renewal, and every later one, go on; resolves once none is held. */
  release(): Promise<void>;
}

export async function holdRenewals(
  db: SqlExecutor,
  table: 'ferry_inbox_receipts' | 'outbox_events',
  which: 'all' | 'first',
): Promise<HeldRenewals> {
  await db.query('CREATE SEQUENCE held_renewals_sent');
  await db.query('CREATE SEQUENCE held_renewals_released MINVALUE 0 START 0');
  // Sequences are read outside the statement's snapshot: the loop sees the release at once.
  await db.query(`
    CREATE FUNCTION hold_renewal() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE n bigint;
    BEGIN
      IF strpos(current_query(), '${RENEWAL_TEXT}') = 0 THEN RETURN NULL; END IF;
      n := nextval('held_renewals_sent');
      IF ${which === 'first' ? 'n = 1' : 'true'} THEN
        WHILE (SELECT last_value FROM held_renewals_released) < n LOOP
          PERFORM pg_sleep(0.02);
        END LOOP;
      END IF;
      RETURN NULL;
    END $$`);
  await db.query(
    `CREATE TRIGGER hold_renewal BEFORE UPDATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION hold_renewal()`,
  );
  const held = async (): Promise<number> => {
    const [row] = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event = 'PgSleep' AND strpos(query, $1) > 0`,
      [RENEWAL_TEXT],
    );
    return Number(row?.n ?? 0);
  };
  return {
    async sent() {
      const [row] = await db.query<{ n: string; called: boolean }>(
        'SELECT last_value AS n, is_called AS called FROM held_renewals_sent',
      );
      return row?.called ? Number(row.n) : 0;
    },
    held,
    async releaseUpTo(n) {
      await db.query("SELECT setval('held_renewals_released', $1)", [n]);
    },
    async release() {
      await db.query("SELECT setval('held_renewals_released', 1000000000)");
      await waitUntil('the held renewals to go on', async () => (await held()) === 0, {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
    },
  };
}
