/**
 * The seed broker of one connection's kafkajs clients: the first of `brokers` until a connect to
 * it fails, then the next one, in turn. Shared by the connection's clients, so that a client (or
 * a consumer's next session, a new client) starts from the seed that answered last, not from a
 * broker another client found down.
 */
export class SeedRotation {
  private turn = 0;

  constructor(private readonly brokers: readonly string[]) {}

  current(): string {
    return this.brokers[this.turn % this.brokers.length]!;
  }

  /** A connect to `broker` failed: the seed is the next one, unless another client moved on already. */
  failed(broker: string): void {
    if (this.current() === broker) this.turn += 1;
  }
}
