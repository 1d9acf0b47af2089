import type { ClientBase } from 'pg';

type QueueFields = Partial<Record<'_activeQuery' | '_queryQueue' | 'activeQuery' | 'queryQueue', unknown>>;

/**
 * How many statements a node-postgres client has sent or queued and not yet had answered (its
 * active query and its queue), or null when the client does not show it. Read from the fields pg
 * keeps them in (`_activeQuery`/`_queryQueue` in pg 8.x and the native bindings; own
 * `activeQuery`/`queryQueue` fields in older 8.x: never through pg's deprecated getters).
 */
export function pendingStatements(client: ClientBase): number | null {
  const fields = client as unknown as QueueFields;
  if (Array.isArray(fields._queryQueue)) return fields._queryQueue.length + (fields._activeQuery ? 1 : 0);
  const queue = Object.getOwnPropertyDescriptor(client, 'queryQueue');
  const active = Object.getOwnPropertyDescriptor(client, 'activeQuery');
  if (queue === undefined || !('value' in queue) || !Array.isArray(queue.value)) return null;
  return queue.value.length + (active && 'value' in active && active.value ? 1 : 0);
}

type ClosedFields = Partial<Record<'_ending' | '_queryable' | 'ending' | 'ended', unknown>>;

/**
 * Why a node-postgres client or pool can never answer again, or null: its `end()` was called (a
 * client's `_ending`, a pool's `ending` / `ended`), or a connection error left the client
 * unusable (`_queryable` false). Read from pg's own fields, as pendingStatements does.
 */
export function closedReason(target: object, isPool: boolean): string | null {
  const fields = target as ClosedFields;
  if (isPool)
    return fields.ending === true || fields.ended === true ? 'a node-postgres pool that was ended' : null;
  if (fields._ending === true) return 'a node-postgres client that was ended (its end() was called)';
  if (fields._queryable === false) return 'a node-postgres client broken by a connection error';
  return null;
}
