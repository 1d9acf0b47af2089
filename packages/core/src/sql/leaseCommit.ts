/**
 * A column (with its leading comma) that turns synchronous_commit off for the transaction of the statement that selects it
 * (set_config(..., true): that transaction only), so its COMMIT does not wait for the WAL to be
 * flushed. For statements that only take leases: the inbox worker's and the relay's claims.
 *
 * Why a claim may commit so: it changes nothing an application relies on being durable. Whatever
 * is done under it commits durably later (the handler's transaction and its fenced completion, the
 * relay's SENT mark), and PostgreSQL flushes WAL in order, so that later commit flushes the claim
 * with it. A crash of PostgreSQL can forget only a claim whose WAL was not flushed yet (within
 * about 3 x wal_writer_delay, 0.6 s by default), and nothing durable depends on it: the receipt or
 * event is then due again, with the attempt that claim counted not counted, as if it had not been
 * claimed. Without the setting every claim waited for a flush of its own: on a single-message path
 * (RabbitMQ → inbox → handler → outbox → Kafka) the two claims were two of its four flushes.
 *
 * Only on a root executor (`!db.inTransaction`), where the statement is a transaction of its own:
 * inside a transaction of the caller's (a relay or inbox given an executor bound to one) it would
 * make the caller's writes non-durable too, so the statement is sent without it there.
 */
export const LEASE_COMMIT_COLUMN = `, (SELECT set_config('synchronous_commit', 'off', true)) AS lease_commit`;
