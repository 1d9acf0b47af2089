import type { InboxAcceptInput, InboxAcceptResult } from '../contracts';
import { FerryError, FerryValidationError } from '../errors';
import { ACCEPTANCE_FAILED_CODE, invalidResultReason } from './errors';
import { acceptIsolated, isBatchWideFailure } from './isolate';

const input = (messageId: string): InboxAcceptInput => ({
  consumer: 'c',
  messageId,
  tenantId: 't',
  payload: {},
});

/** A fake acceptor (pure logic): any call containing a poisoned id throws `failure(id)`. */
function fakeAcceptor(poison: ReadonlyMap<string, unknown>) {
  const calls: string[][] = [];
  const acceptMany = (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
    calls.push(inputs.map((i) => i.messageId));
    const bad = inputs.find((i) => poison.has(i.messageId));
    if (bad) return Promise.reject(poison.get(bad.messageId));
    return Promise.resolve(inputs.map((i) => ({ kind: 'accepted', id: `r-${i.messageId}` }) as const));
  };
  return { calls, acceptMany };
}

describe('acceptIsolated', () => {
  const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

  it('accepts every neighbour of the inputs that fail alone, in order', async () => {
    const poison = new Map<string, unknown>([
      ['c', new FerryValidationError('payload', 'holds NUL', 'FERRY_VALIDATION_FAILED', 'invalid_text')],
      ['f', new Error('boom')],
      ['g', new FerryError('FERRY_VALIDATION_FAILED', 'refused by a custom acceptor')],
    ]);
    const { acceptMany } = fakeAcceptor(poison);
    const results = await acceptIsolated(ids.map(input), acceptMany);
    expect(results).toEqual([
      { kind: 'accepted', id: 'r-a' },
      { kind: 'accepted', id: 'r-b' },
      { kind: 'invalid', code: 'FERRY_VALIDATION_FAILED', reason: 'holds NUL', rejectReason: 'invalid_text' },
      { kind: 'accepted', id: 'r-d' },
      { kind: 'accepted', id: 'r-e' },
      { kind: 'invalid', code: ACCEPTANCE_FAILED_CODE, reason: 'boom', rejectReason: 'acceptance_failed' },
      {
        kind: 'invalid',
        code: 'FERRY_VALIDATION_FAILED',
        reason: 'refused by a custom acceptor',
        rejectReason: 'inbox_invalid',
      },
    ]);
    expect(results.map((r) => (r.kind === 'invalid' ? invalidResultReason(r) : r.kind))).toEqual([
      'accepted',
      'accepted',
      'invalid_text',
      'accepted',
      'accepted',
      'acceptance_failed',
      'inbox_invalid',
    ]);
    expect(invalidResultReason(ACCEPTANCE_FAILED_CODE)).toBe('acceptance_failed');
    expect(invalidResultReason('FERRY_VALIDATION_FAILED')).toBe('inbox_invalid');
    expect(invalidResultReason({ code: 'X', rejectReason: 'not-a-reason' })).toBe('inbox_invalid');
  });

  it('makes one call when nothing fails', async () => {
    const { calls, acceptMany } = fakeAcceptor(new Map());
    await acceptIsolated(ids.map(input), acceptMany);
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['FERRY_DATABASE_UNAVAILABLE'],
    ['FERRY_ADMISSION_REJECTED'],
    ['FERRY_CLOSED'],
    ['FERRY_TIMEOUT'],
    ['FERRY_SCHEMA_NOT_READY'],
  ] as const)('rethrows a batch-wide %s without bisecting', async (code) => {
    const failure = new FerryError(code, 'whole batch');
    const { calls, acceptMany } = fakeAcceptor(new Map([['d', failure]]));
    await expect(acceptIsolated(ids.map(input), acceptMany)).rejects.toBe(failure);
    expect(calls).toHaveLength(1);
  });

  it('isolates a non-retriable FERRY_DATABASE_UNAVAILABLE (PostgreSQL refused this data)', async () => {
    const refused = new FerryError('FERRY_DATABASE_UNAVAILABLE', 'invalid byte sequence', {
      retriable: false,
    });
    expect(isBatchWideFailure(refused)).toBe(false);
    const { acceptMany } = fakeAcceptor(new Map([['b', refused]]));
    const results = await acceptIsolated(ids.map(input), acceptMany);
    expect(results.map((r) => r.kind)).toEqual([
      'accepted',
      'invalid',
      'accepted',
      'accepted',
      'accepted',
      'accepted',
      'accepted',
    ]);
    expect(results[1]).toEqual({
      kind: 'invalid',
      code: 'FERRY_DATABASE_UNAVAILABLE',
      reason: 'invalid byte sequence',
      rejectReason: 'acceptance_failed',
    });
  });

  it('rethrows a retriable failure that every input hits alone (nothing points at the inputs)', async () => {
    const unknown = new FerryError('FERRY_DATABASE_ERROR', 'database error of unknown cause');
    const everything = new Map(ids.map((id) => [id, unknown] as const));
    await expect(acceptIsolated(ids.map(input), fakeAcceptor(everything).acceptMany)).rejects.toBe(unknown);
    await expect(acceptIsolated([input('a')], fakeAcceptor(everything).acceptMany)).rejects.toBe(unknown);
    const one = fakeAcceptor(new Map([['e', unknown]]));
    const results = await acceptIsolated(ids.map(input), one.acceptMany);
    expect(results.filter((r) => r.kind === 'invalid')).toEqual([
      {
        kind: 'invalid',
        code: 'FERRY_DATABASE_ERROR',
        reason: unknown.message,
        rejectReason: 'acceptance_failed',
      },
    ]);
  });

  it('treats a result count that does not match the inputs as a failure of that call', async () => {
    const acceptMany = (inputs: readonly InboxAcceptInput[]) =>
      Promise.resolve(inputs.length === 1 ? [{ kind: 'accepted', id: inputs[0]!.messageId } as const] : []);
    const results = await acceptIsolated(['x', 'y'].map(input), acceptMany);
    expect(results).toEqual([
      { kind: 'accepted', id: 'x' },
      { kind: 'accepted', id: 'y' },
    ]);
    expect(await acceptIsolated([], acceptMany)).toEqual([]);
  });
});
