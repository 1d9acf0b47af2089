const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A string in the canonical 8-4-4-4-12 hexadecimal form PostgreSQL prints for a `uuid`, any case:
 * the one check behind every record id, claim token and request id ferry takes (the CLI's too).
 */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
