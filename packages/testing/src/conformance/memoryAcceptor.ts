import { FerryError, type InboxAcceptInput, type InboxAcceptResult, type InboxAcceptor } from '@ferry/core';

/**
 * An in-memory InboxAcceptor with the inbox's contract: dedup on (tenant, consumer, message
 * id), one result per input in order, a retriable FerryError when the whole batch fails.
 * The conformance suite tests the transport, so the acceptor needs no database.
 */
export class MemoryAcceptor implements InboxAcceptor {
  readonly maxPayloadBytes: number;
  /** Message ids in the order they were first accepted. */
  readonly accepted: string[] = [];
  /** Every input offered, failed batches included. */
  readonly offered: string[] = [];
  private readonly keys = new Set<string>();
  private failuresLeft = 0;
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  private holding = 0;

  constructor(maxPayloadBytes = 256 * 1024) {
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** The next `count` acceptMany calls throw a retriable FerryError. */
  failNext(count: number): void {
    this.failuresLeft = count;
  }

  /** Holds acceptMany calls until `release()`. */
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  release(): void {
    this.openGate?.();
    this.gate = null;
  }

  get held(): number {
    return this.holding;
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.offered.push(...inputs.map((input) => input.messageId));
    if (this.gate) {
      this.holding += 1;
      await this.gate;
      this.holding -= 1;
    }
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'conformance acceptor refuses this batch');
    }
    return inputs.map((input) => {
      const key = JSON.stringify([input.tenantId, input.consumer, input.messageId]);
      if (this.keys.has(key)) return { kind: 'duplicate', id: key };
      this.keys.add(key);
      this.accepted.push(input.messageId);
      return { kind: 'accepted', id: key };
    });
  }
}
