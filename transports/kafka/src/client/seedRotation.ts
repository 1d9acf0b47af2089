/**
 * The seed brokers of one connection, handed out one at a time and in turn to every kafkajs
 * client of it. Shared by the connection's clients, so that a consumer's next session (a new
 * client) starts from the seed after the one its last start failed on, not from the first.
 */
export class SeedRotation {
  private turn = 0;

  constructor(private readonly brokers: readonly string[]) {}

  next(): string {
    const broker = this.brokers[this.turn % this.brokers.length]!;
    this.turn += 1;
    return broker;
  }
}
