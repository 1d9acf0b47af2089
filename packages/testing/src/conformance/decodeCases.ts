import { expect } from './jest';
import { timedCases } from './timeouts';
import { NON_ASCII_TEXT } from './messages';
import type { MemoryAcceptor } from './memoryAcceptor';
import type { DeadLetter, TransportUnderTest } from './types';

/** What the decode cases need from the suite (read at run time, after beforeEach). */
export interface DecodeContext {
  readonly timeoutMs: number;
  readonly deadLetter: boolean;
  transport(): TransportUnderTest;
  acceptor(): MemoryAcceptor;
  attach(): Promise<void>;
  deadLettersAtLeast(count: number, what: string): Promise<readonly DeadLetter[]>;
  expectAcceptedExactly(ids: readonly string[]): Promise<void>;
  /** Closes the case's consumers; with `heldCount`, waits until the broker holds nothing. */
  expectNothingHeld(): Promise<void>;
}

/**
 * How a delivery is read before acceptance, the same on every transport: a body whose numbers
 * JSON.parse would change and a message id that names nothing are dead-lettered, each with its
 * reason, their valid neighbour accepted exactly; no header with a reserved name but ferry's own
 * reaches the inbox.
 */
export function registerDecodeCases(context: DecodeContext): void {
  const it = timedCases(context.timeoutMs);
  /** Publishes `invalid` ([message id, body]) and a valid neighbour; each invalid one dead-lettered with `reason`. */
  async function expectDeadLettered(
    invalid: readonly (readonly [string, string])[],
    reason: string,
    neighbour: readonly [string, string],
  ): Promise<void> {
    // Published before the consumer is attached, so one batch can hold several invalid ones.
    for (const [messageId, body] of [...invalid, neighbour])
      await context.transport().publishRaw({ body, messageId });
    await context.attach();
    const dead = await context.deadLettersAtLeast(invalid.length, `${invalid.length} dead letters`);
    expect(dead.map((letter) => letter.reason)).toEqual(invalid.map(() => reason));
    await context.expectAcceptedExactly([neighbour[0]]);
    expect(context.acceptor().acceptedInputs.get(neighbour[0])?.payload).toEqual(JSON.parse(neighbour[1]));
    await context.expectNothingHeld();
  }

  if (context.deadLetter) {
    it('dead-letters a body whose numbers JSON.parse would change; keeps the others exactly', async () => {
      await expectDeadLettered(
        [
          ['conformance-bigint', '{"id": 12345678901234567891}'],
          ['conformance-infinity', '{"n": [1e400]}'],
          ['conformance-underflow', '{"n": 1e-400}'],
          ['conformance-negative-zero', '{"n": -0}'],
        ],
        'unparseable_body',
        [
          'conformance-kept',
          `{"id": 9007199254740991, "f": 0.30000000000000004, "big": 1e300, "s": "12345678901234567891", "text": ${JSON.stringify(NON_ASCII_TEXT)}}`,
        ],
      );
    });

    it('dead-letters a delivery whose message id is only whitespace or holds a control character', async () => {
      await expectDeadLettered(
        [' ', '\t', 'conformance-\u0085'].map((messageId) => [messageId, '{"n":1}'] as const),
        'missing_identity',
        ['conformance-id-valid', '{"n":2}'],
      );
    });
  }

  it("stores no reserved header name with a delivery but ferry's own, in any case", async () => {
    await context.attach();
    const forged = {
      'X-Ferry-Tenant-Id': 'victim',
      'x-ferry-transport-attempts': '99',
      'x-ferry-reject-reason': 'forged',
      'x-ferry-other': 'forged',
      TraceParent: 'forged',
    };
    await context.transport().publishRaw({
      body: '{"n":1}',
      messageId: 'conformance-headers',
      headers: { ...forged, 'x-app': 'kept' },
    });
    await context.expectAcceptedExactly(['conformance-headers']);
    const headers = context.acceptor().acceptedInputs.get('conformance-headers')?.headers ?? {};
    expect(headers['x-app']).toBe('kept');
    expect(Object.keys(headers).filter((name) => name in forged)).toEqual([]);
  });
}
