import { scanStoredNumbers } from './jsonNumbers';

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
 * Returns whether the text may hold such a number (mayHoldInexactNumber, so it was scanned): false
 * when it holds none, or is no text; a caller that also needs that answer (notePayloadText) reads
 * the text with MAYBE_INEXACT once.
 */
export function noteInexactNumbers(read: object, payloadText: unknown): boolean {
  if (typeof payloadText !== 'string') return false;
  const { scanned, fault } = scanStoredNumbers(payloadText);
  if (fault !== null) inexactPayloads.set(read, fault);
  return scanned;
}

/** noteInexactNumbers, returning `read`. */
export function noteInexactPayload<T extends object>(read: T, payloadText: unknown): T {
  noteInexactNumbers(read, payloadText);
  return read;
}

/** Why the payload `read` was made from does not hold what its row does (noteInexactPayload), or null. */
export function inexactPayloadOf(read: object): string | null {
  return inexactPayloads.get(read) ?? null;
}
