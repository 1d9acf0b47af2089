import {
  FerryError,
  InboxAdmissionRejectedError,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
  type InboxAdmissionResult,
} from '@ferry/core';

/** The error text of a batch failNext() fails: a consumer's `acceptance-…` event names it. */
export const REFUSED_BATCH_TEXT = 'conformance acceptor refuses this batch';

/**
 * An in-memory InboxAcceptor with the inbox's contract: dedup on (tenant, consumer, message
 * id), one result per input in order, `conflict` for a known identity with another payload,
 * `invalid` (payload_too_large) for a payload over maxPayloadBytes and for the ids `answerInvalid`
 * names, a retriable FerryError when the whole batch fails, and (admitAtMost) the admission limit:
 * InboxAdmissionRejectedError refusing only the new inputs. The conformance suite tests the
 * transport, so the acceptor needs no database.
 */
export class MemoryAcceptor implements InboxAcceptor {
  readonly maxPayloadBytes: number;
  /** Message ids in the order they were first accepted. */
  readonly accepted: string[] = [];
  /** Every input offered, failed batches included. */
  readonly offered: string[] = [];
  /** Each message id first accepted, with its input as the transport handed it over. */
  readonly acceptedInputs = new Map<string, InboxAcceptInput>();
  /** The `system` of every input offered, in the same order as `offered` (undefined: not named). */
  readonly systems: (string | null | undefined)[] = [];
  /** Each accepted identity's payload as JSON: the fingerprint a conflict is told by. */
  private readonly keys = new Map<string, string>();
  private readonly invalidIds = new Set<string>();
  private failuresLeft = 0;
  private gate: Promise<'accept' | 'fail'> | null = null;
  private openGate: ((how: 'accept' | 'fail') => void) | null = null;
  private holding = 0;
  private admissionLimit: number | null = null;
  private readonly poisoned = new Set<string>();

  constructor(maxPayloadBytes = 256 * 1024) {
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** The next `count` acceptMany calls throw a retriable FerryError. */
  failNext(count: number): void {
    this.failuresLeft = count;
  }

  /**
   * Like the inbox's maxPendingMessages: once `limit` messages are accepted, a batch with new
   * inputs throws InboxAdmissionRejectedError, `refused` for those and answered for the rest.
   * null lifts the limit.
   */
  admitAtMost(limit: number | null): void {
    this.admissionLimit = limit;
  }

  /**
   * Every acceptMany call whose batch holds `messageId` throws a plain (non-FerryError) error,
   * as a database error caused by one row's data does: only that input is at fault.
   */
  poison(messageId: string): void {
    this.poisoned.add(messageId);
  }

  /** Every input with this message id is answered `invalid` (as the inbox answers invalid text). */
  answerInvalid(messageId: string): void {
    this.invalidIds.add(messageId);
  }

  /** Holds acceptMany calls until `release()`. */
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  release(): void {
    this.openGate?.('accept');
    this.gate = null;
  }

  /**
   * Ends the hold with a failure: every held acceptMany call throws a retriable FerryError (the
   * database went away while they waited); calls after it are answered as usual. What was held can
   * then reach the inbox only through the broker, given back and delivered again.
   */
  failHeld(): void {
    this.openGate?.('fail');
    this.gate = null;
  }

  get held(): number {
    return this.holding;
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.offered.push(...inputs.map((input) => input.messageId));
    this.systems.push(...inputs.map((input) => input.system));
    if (this.gate) {
      this.holding += 1;
      const how = await this.gate;
      this.holding -= 1;
      if (how === 'fail') {
        throw new FerryError(
          'FERRY_DATABASE_UNAVAILABLE',
          'conformance acceptor lost its database while held',
        );
      }
    }
    const poison = inputs.find((input) => this.poisoned.has(input.messageId));
    if (poison) throw new Error(`conformance acceptor cannot store ${poison.messageId}`);
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new FerryError('FERRY_DATABASE_UNAVAILABLE', REFUSED_BATCH_TEXT);
    }
    const limit = this.admissionLimit;
    const results = inputs.map((input): InboxAdmissionResult => {
      const key = JSON.stringify([input.tenantId, input.consumer, input.messageId]);
      const payload = JSON.stringify(input.payload);
      if (this.invalidIds.has(input.messageId)) {
        return {
          kind: 'invalid',
          code: 'FERRY_VALIDATION_FAILED',
          reason: 'conformance acceptor refuses this message',
          rejectReason: 'inbox_invalid',
        };
      }
      if (Buffer.byteLength(payload, 'utf8') > this.maxPayloadBytes) {
        return {
          kind: 'invalid',
          code: 'FERRY_PAYLOAD_TOO_LARGE',
          reason: `payload is over ${this.maxPayloadBytes} bytes`,
          rejectReason: 'payload_too_large',
        };
      }
      const known = this.keys.get(key);
      if (known !== undefined && known !== payload) {
        return { kind: 'conflict', id: key, reason: 'message id reused with a different payload' };
      }
      if (known !== undefined) return { kind: 'duplicate', id: key };
      if (limit !== null && this.accepted.length >= limit) {
        return { kind: 'refused', code: 'FERRY_ADMISSION_REJECTED', reason: 'conformance admission limit' };
      }
      this.keys.set(key, payload);
      this.accepted.push(input.messageId);
      this.acceptedInputs.set(input.messageId, input);
      return { kind: 'accepted', id: key };
    });
    if (limit !== null && results.some((result) => result.kind === 'refused')) {
      throw new InboxAdmissionRejectedError(limit, results);
    }
    return results as InboxAcceptResult[];
  }
}
