import { expect } from './jest';
import { timedCases } from './timeouts';
import { waitUntil } from './assertions';
import { MemoryAcceptor } from './memoryAcceptor';
import type { DeadLetter, TransportUnderTest } from './types';

/** What the answer cases need from the suite (read at run time, after beforeEach). */
export interface AnswerContext {
  readonly timeoutMs: number;
  readonly deadLetter: boolean;
  transport(): TransportUnderTest;
  acceptor(): MemoryAcceptor;
  attach(to?: MemoryAcceptor): Promise<void>;
  deadLettersAtLeast(count: number, what: string): Promise<readonly DeadLetter[]>;
  expectAcceptedExactly(ids: readonly string[]): Promise<void>;
  /** Closes the case's consumers; with `heldCount`, waits until the broker holds nothing. */
  expectNothingHeld(): Promise<void>;
}

/** The acceptor's limit in the payload case. */
const SMALL_LIMIT_BYTES = 1_024;

/**
 * What the inbox answers besides accepted and duplicate: `invalid` (invalid text, too deep, too
 * large) and `conflict` (a known message id with another payload) are dead-lettered with their
 * reasons (`inbox_invalid`, `fingerprint_conflict`), never acked silently; a body over the inbox's
 * `maxPayloadBytes` is dead-lettered as `payload_too_large` and never accepted.
 */
export function registerAnswerCases(context: AnswerContext): void {
  if (!context.deadLetter) return;
  const it = timedCases(context.timeoutMs);

  it('dead-letters the deliveries the inbox answers invalid or conflicting, each with its reason', async () => {
    const transport = context.transport();
    const acceptor = context.acceptor();
    acceptor.answerInvalid('conformance-refused');
    await transport.publishRaw({ body: '{"n":1}', messageId: 'conformance-reused' });
    await transport.publishRaw({ body: '{"n":2}', messageId: 'conformance-refused' });
    await transport.publishRaw({ body: '{"n":3}', messageId: 'conformance-kept' });
    await context.attach();
    await context.expectAcceptedExactly(['conformance-reused', 'conformance-kept']);
    // The same id again with another payload: the inbox answers conflict.
    await transport.publishRaw({ body: '{"n":4}', messageId: 'conformance-reused' });
    const dead = await context.deadLettersAtLeast(
      2,
      'the invalid and the conflicting delivery dead-lettered',
    );
    expect(dead.map((letter) => [letter.messageId, letter.reason]).sort()).toEqual([
      ['conformance-refused', 'inbox_invalid'],
      ['conformance-reused', 'fingerprint_conflict'],
    ]);
    await context.expectAcceptedExactly(['conformance-reused', 'conformance-kept']);
    await context.expectNothingHeld();
  });

  it("dead-letters a payload over the inbox's maxPayloadBytes as payload_too_large, measured on the payload, never on its escaped body; accepts its neighbours", async () => {
    const transport = context.transport();
    const small = new MemoryAcceptor(SMALL_LIMIT_BYTES);
    // Over 6 × the limit without whitespace: more than any payload within it written with escapes.
    const far = 'x'.repeat(7 * SMALL_LIMIT_BYTES);
    await transport.publishRaw({ body: JSON.stringify({ far }), messageId: 'conformance-too-large' });
    // Over the limit as a payload, within 6 × it as a body: measured on the parsed payload.
    const filler = 'x'.repeat(2 * SMALL_LIMIT_BYTES);
    await transport.publishRaw({ body: JSON.stringify({ filler }), messageId: 'conformance-over' });
    // Within the limit as a payload, over it as a body: `é` written `\u00e9`, as Python's json.dumps does.
    const escaped = `{"note": "${'\\u00e9'.repeat(SMALL_LIMIT_BYTES / 4)}"}`;
    await transport.publishRaw({ body: escaped, messageId: 'conformance-escaped' });
    await transport.publishRaw({ body: '{"n":1}', messageId: 'conformance-small' });
    await context.attach(small);
    const dead = await context.deadLettersAtLeast(2, 'the large deliveries dead-lettered');
    expect([...dead].sort((a, b) => (a.messageId ?? '').localeCompare(b.messageId ?? ''))).toEqual([
      { messageId: 'conformance-over', reason: 'payload_too_large' },
      { messageId: 'conformance-too-large', reason: 'payload_too_large' },
    ]);
    await waitUntil(
      'the neighbours accepted',
      () => (small.accepted.length >= 2 ? true : undefined),
      context.timeoutMs,
    );
    expect([...small.accepted].sort()).toEqual(['conformance-escaped', 'conformance-small']);
    // A body no payload within the limit can be is refused before acceptance, unparsed.
    expect(small.offered).not.toContain('conformance-too-large');
    await context.expectNothingHeld();
  });
}
