import { Inbox, type InboxEvent, type InboxOptions, type PrismaClientLike } from '@ferry/core';
import type { InboxInternals } from '@ferry/core';
import pino from 'pino';
import type { TestDatabase } from '../../../../test-support/database';

export const quietLogger = pino({ level: 'silent' });

/** Short timings that respect the bounds (heartbeat < lease / 2). */
export const FAST_WORKER = {
  pollIntervalMs: 20,
  leaseMs: 2_000,
  heartbeatIntervalMs: 200,
  transactionTimeoutMs: 5_000,
  shutdownTimeoutMs: 2_000,
  retryBaseMs: 1,
  retryMaxMs: 1,
} as const;

export function makeInbox(
  client: PrismaClientLike,
  options: InboxOptions = {},
  internals: InboxInternals<never> = {},
): Inbox {
  return new Inbox(
    client,
    { logger: quietLogger, ...options, worker: { ...FAST_WORKER, ...options.worker } },
    internals as never,
  );
}

export function recorder(): { events: InboxEvent[]; observer: (event: InboxEvent) => void } {
  const events: InboxEvent[] = [];
  return { events, observer: (event) => void events.push(event) };
}

/** Polls `check` until it returns a value other than undefined / false, or fails at the deadline. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A latch a test opens to let a stalled handler go on. */
export function latch(): { promise: Promise<void>; open: () => void; opened: () => boolean } {
  let open!: () => void;
  let isOpen = false;
  const promise = new Promise<void>((resolve) => {
    open = () => {
      isOpen = true;
      resolve();
    };
  });
  return { promise, open, opened: () => isOpen };
}

export async function createBusinessTable(t: TestDatabase): Promise<void> {
  await t.db.execute(
    'CREATE TABLE business_rows (id bigserial PRIMARY KEY, receipt_id uuid NOT NULL, note text)',
  );
}

export async function businessCount(t: TestDatabase, receiptId?: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM business_rows WHERE $1::uuid IS NULL OR receipt_id = $1::uuid',
    [receiptId ?? null],
  );
  return Number(row?.n ?? 0);
}

export async function receiptRow(t: TestDatabase, id: string): Promise<Record<string, unknown>> {
  const [row] = await t.db.query<Record<string, unknown>>(
    'SELECT * FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  if (!row) throw new Error(`no receipt ${id}`);
  return row;
}

let sequence = 0;
export function message(overrides: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    consumer: 'orders',
    messageId: `m-${sequence}-${Math.random().toString(36).slice(2)}`,
    tenantId: 'acme' as string | null,
    payload: { n: sequence } as Record<string, unknown>,
    ...overrides,
  };
}
