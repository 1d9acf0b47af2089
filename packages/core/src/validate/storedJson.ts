import { inexactStoredNumberFault } from './jsonNumbers';

/**
 * A jsonb column, selected as text (`::text`) so that every driver hands over the same thing:
 * parsing a value a driver had already parsed would read a JSON string payload as JSON text.
 */
export function jsonColumn<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** Objects read from a row whose payload text holds a number JSON.parse changed, with the fault. */
const inexactPayloads = new WeakMap<object, string>();

/**
 * `read` (an outbox message, an inbox receipt) made from `payloadText`, its payload column as
 * PostgreSQL wrote it: notes a number in it that JSON.parse changed (inexactStoredNumberFault), for
 * inexactPayloadOf. ferry refuses such numbers when it writes a payload; a row inserted by SQL
 * (another library's migration, a hand-written fix) holds them as jsonb keeps them: exact numerics.
 */
export function noteInexactPayload<T extends object>(read: T, payloadText: unknown): T {
  const fault = typeof payloadText === 'string' ? inexactStoredNumberFault(payloadText) : null;
  if (fault !== null) inexactPayloads.set(read, fault);
  return read;
}

/** Why the payload `read` was made from does not hold what its row does (noteInexactPayload), or null. */
export function inexactPayloadOf(read: object): string | null {
  return inexactPayloads.get(read) ?? null;
}
