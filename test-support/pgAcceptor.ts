/**
 * A stand-in InboxAcceptor on a real PostgreSQL table, shared by the transport consumer tests
 * (they test the transport, not the inbox): dedup on (consumer, message_id) with ON CONFLICT
 * DO NOTHING, resolving only after its transaction committed. `refuse(true)` makes the
 * database itself refuse the inserts (a trigger raises SQLSTATE 57P03), translated into a
 * retriable FerryError as the real inbox does for a database failure; `hold()` keeps
 * acceptMany waiting (a slow database).
 */
import {
  FerryError,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
  type SqlExecutor,
} from '@ferry/core';

/**
 * The limit an acceptor keeps (InboxAcceptor.maxPayloadBytes), as core's Inbox measures it: UTF-8
 * bytes of JSON.stringify(payload); the invalid result Inbox answers, or null within it.
 */
export function payloadTooLarge(input: InboxAcceptInput, maxPayloadBytes: number): InboxAcceptResult | null {
  const payloadBytes = Buffer.byteLength(JSON.stringify(input.payload), 'utf8');
  if (payloadBytes <= maxPayloadBytes) return null;
  return {
    kind: 'invalid',
    code: 'FERRY_PAYLOAD_TOO_LARGE',
    reason: `payload is ${payloadBytes} bytes; the limit is ${maxPayloadBytes}`,
    rejectReason: 'payload_too_large',
  };
}

export class PgTestAcceptor implements InboxAcceptor {
  readonly maxPayloadBytes: number;
  /** Sizes of every acceptMany call, in order (failed calls included). */
  readonly batches: number[] = [];
  /** Message ids of every acceptMany input, failed calls included. */
  readonly seen: string[] = [];
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  private waiting = 0;

  private constructor(
    private readonly db: SqlExecutor,
    maxPayloadBytes: number,
  ) {
    this.maxPayloadBytes = maxPayloadBytes;
  }

  static async create(db: SqlExecutor, maxPayloadBytes = 4_096): Promise<PgTestAcceptor> {
    await db.execute(`CREATE TABLE IF NOT EXISTS test_inbox (
      id bigserial PRIMARY KEY,
      consumer text NOT NULL,
      message_id text NOT NULL,
      tenant_id text,
      type text,
      payload jsonb NOT NULL,
      headers jsonb NOT NULL
    )`);
    await db.execute(
      'CREATE UNIQUE INDEX IF NOT EXISTS test_inbox_identity ON test_inbox (consumer, message_id)',
    );
    await db.execute('CREATE TABLE IF NOT EXISTS test_switch (refuse boolean NOT NULL)');
    await db.execute('INSERT INTO test_switch SELECT false WHERE NOT EXISTS (SELECT 1 FROM test_switch)');
    await db.execute(`CREATE OR REPLACE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (SELECT refuse FROM test_switch) THEN
          RAISE EXCEPTION 'test database refuses work' USING ERRCODE = '57P03';
        END IF;
        RETURN NEW;
      END $$`);
    await db.execute(`CREATE OR REPLACE TRIGGER test_inbox_refuse BEFORE INSERT ON test_inbox
      FOR EACH ROW EXECUTE FUNCTION test_refuse()`);
    return new PgTestAcceptor(db, maxPayloadBytes);
  }

  async refuse(on: boolean): Promise<void> {
    await this.db.execute('UPDATE test_switch SET refuse = $1', [on]);
  }

  /** Holds every acceptMany call until `release()`; `held()` counts calls waiting. */
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  release(): void {
    this.openGate?.();
    this.gate = null;
  }

  held(): number {
    return this.waiting;
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.batches.push(inputs.length);
    this.seen.push(...inputs.map((i) => i.messageId));
    if (this.gate) {
      this.waiting += 1;
      await this.gate;
      this.waiting -= 1;
    }
    try {
      return await this.db.transaction(async (tx) => {
        const results: InboxAcceptResult[] = [];
        for (const input of inputs) {
          const tooLarge = payloadTooLarge(input, this.maxPayloadBytes);
          if (tooLarge !== null) {
            results.push(tooLarge);
            continue;
          }
          const inserted = await tx.query<{ id: string }>(
            `INSERT INTO test_inbox (consumer, message_id, tenant_id, type, payload, headers)
             VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
             ON CONFLICT (consumer, message_id) DO NOTHING RETURNING id::text`,
            [
              input.consumer,
              input.messageId,
              input.tenantId,
              input.type ?? null,
              JSON.stringify(input.payload),
              JSON.stringify(input.headers ?? {}),
            ],
          );
          if (inserted[0]) {
            results.push({ kind: 'accepted', id: inserted[0].id });
            continue;
          }
          const [existing] = await tx.query<{ id: string }>(
            'SELECT id::text FROM test_inbox WHERE consumer = $1 AND message_id = $2',
            [input.consumer, input.messageId],
          );
          results.push({ kind: 'duplicate', id: existing?.id ?? '' });
        }
        return results;
      });
    } catch (error) {
      throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'test inbox could not accept the batch', {
        cause: error,
      });
    }
  }

  async stored(): Promise<
    { messageId: string; tenantId: string | null; type: string | null; headers: Record<string, string> }[]
  > {
    return this.db.query(
      `SELECT message_id AS "messageId", tenant_id AS "tenantId", type, headers FROM test_inbox ORDER BY id`,
    );
  }

  async storedIds(): Promise<string[]> {
    return (await this.stored()).map((row) => row.messageId);
  }
}
