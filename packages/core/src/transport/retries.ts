/**
 * The transport retry of a delivery whose acceptance failed for its whole batch with a retriable
 * error that is not an outage (acceptHolding's `failed`: e.g. `FERRY_DATABASE_ERROR`). A transport
 * that counts these trips per delivery (RabbitMQ through its retry tiers, the in-memory consumer
 * of @ferry/testing) dead-letters the delivery once `maxTransportRetries` of them are spent; an
 * outage (held) spends none. One home for the default, the reject reason and its detail.
 */
export const TRANSPORT_RETRIES = {
  /** Default of `maxTransportRetries`. */
  defaultMax: 5,
  /** The reject reason (`x-ferry-reject-reason`) of a delivery whose transport retries are spent. */
  exhaustedReason: 'transport_retries_exhausted',
} as const;

/** The dead-letter detail of a delivery whose `attempts` transport retries are spent, failing with `error`. */
export function retriesExhaustedDetail(attempts: number, error: string): string {
  return `after ${attempts} transport retries: ${error}`;
}
