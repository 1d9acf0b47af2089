/** The inbox model: each receipt's expected state, and what each worker believes it holds. Pure. */
export type Status = 'PENDING' | 'PROCESSING' | 'RETRYABLE' | 'COMPLETED' | 'DEAD';

export interface ReceiptModel {
  readonly id: string;
  readonly maxAttempts: number;
  status: Status;
  /** Claims in the current retry cycle (each claim consumes one before the handler runs). */
  attempts: number;
  token: string | null;
  leaseLive: boolean;
  /** PENDING / RETRYABLE: next_attempt_at is not in the future. */
  due: boolean;
  /** Committed business effects (the handler's row). */
  effects: number;
}

/** A claim a worker believes it holds; `open` while its handler transaction is running. */
export interface HeldClaim {
  readonly id: string;
  readonly token: string;
  open: boolean;
}

export interface InboxModel {
  readonly receipts: Map<string, ReceiptModel>;
  /** Per worker: its claims. */
  readonly held: HeldClaim[][];
}

/** Receipts a claim may take: due PENDING / RETRYABLE, and abandoned claims with budget left. */
export function claimable(m: Readonly<InboxModel>): Set<string> {
  const ids = new Set<string>();
  for (const r of m.receipts.values()) {
    const fresh = (r.status === 'PENDING' || r.status === 'RETRYABLE') && r.due;
    const abandoned = r.status === 'PROCESSING' && !r.leaseLive && r.attempts < r.maxAttempts;
    if (fresh || abandoned) ids.add(r.id);
  }
  return ids;
}

/** True when `claim` still owns its receipt with a live lease (the fence would pass). */
export function owns(m: Readonly<InboxModel>, claim: HeldClaim): boolean {
  const r = m.receipts.get(claim.id) as ReceiptModel;
  return r.status === 'PROCESSING' && r.token === claim.token && r.leaseLive;
}

export function settle(r: ReceiptModel, status: Status): void {
  Object.assign(r, { status, leaseLive: false, due: false });
}
