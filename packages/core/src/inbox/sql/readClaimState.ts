import type { SqlExecutor } from '../../sql/executor';
import type { InboxStatus } from '../types';
import { TABLE } from './fragments';

export type ClaimState = 'completed' | 'owned' | 'lost';

/** Reconciliation read after a failed handler transaction: what happened to our claim? */
const SQL = `
  SELECT status, claim_token = $2::uuid AS ours, coalesce(lease_expires_at > now(), false) AS live
  FROM ${TABLE} WHERE id = $1::uuid`;

export async function readClaimState(db: SqlExecutor, id: string, claimToken: string): Promise<ClaimState> {
  const [row] = await db.query<{ status: InboxStatus; ours: boolean | null; live: boolean }>(SQL, [
    id,
    claimToken,
  ]);
  if (!row || row.ours !== true) return 'lost';
  if (row.status === 'COMPLETED') return 'completed';
  return row.status === 'PROCESSING' && row.live ? 'owned' : 'lost';
}
