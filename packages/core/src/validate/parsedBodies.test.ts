import fc from 'fast-check';
import { parseJsonObjectBody } from '../transport/body';
import { jsonFault } from './json';
import { payloadNumberRule } from './parsedBodies';

function parsed(body: string): Record<string, unknown> {
  const result = parseJsonObjectBody(body);
  if (!result.ok) throw new Error(`body refused: ${result.detail}`);
  return result.payload;
}

/** Acceptance's walk of `payload` with the rule it holds it to: null, or the path and reason of the first fault. */
function fault(payload: Record<string, unknown>): string | null {
  const found = jsonFault(payload, 64, 'payload', payloadNumberRule(payload));
  return found === null ? null : `${found.path}: ${found.reason}`;
}

describe('payloadNumberRule excuses the floats a body held, where it held them', () => {
  it('keeps every float beyond 2^53-1 of a parsed body, in arrays, nested, negative, under keys that need quoting', () => {
    const payload = parsed(
      '{"a":1.5e17,"b":{"c":[1,-9.2E+18,{"d":1e20}]},"a.b":[1e+16],"k\\"q":{"":6.02214076e+23},"e":123456789.0123456e+9}',
    );
    expect(fault(payload)).toBeNull();
  });

  it('refuses an unsafe integer put where the body had none, or in place of a float it had', () => {
    const offset = Number('9007199254740993');
    const cases: Array<[string, (payload: Record<string, unknown>) => void, string]> = [
      ['a new key', (p) => (p['offset'] = offset), 'payload.offset'],
      [
        'a new key of a nested object',
        (p) => ((p['b'] as Record<string, unknown>)['offset'] = offset),
        'payload.b.offset',
      ],
      ['a pushed array item', (p) => (p['list'] as number[]).push(offset), 'payload.list[2]'],
      ['an item put first', (p) => (p['list'] as number[]).unshift(offset), 'payload.list[0]'],
      ['another value where a float was', (p) => (p['a'] = 2 ** 60), 'payload.a'],
      ['a float moved to another key', (p) => (p['moved'] = p['a']), 'payload.moved'],
      ['a wrapped copy', (p) => (p['copy'] = { ...(p['b'] as object) }), 'payload.copy.n'],
    ];
    for (const [what, change, path] of cases) {
      const payload = parsed('{"a":1.5e17,"b":{"n":1e20},"list":[1e+16,2]}');
      change(payload);
      expect([what, fault(payload)]).toEqual([
        what,
        expect.stringMatching(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}: integer beyond 2\\^53-1`)),
      ]);
    }
  });

  it('holds a body with no float beyond 2^53-1 to the rule for values', () => {
    const payload = parsed('{"n":1,"f":1.5}');
    payload['big'] = 1e20;
    expect(fault(payload)).toMatch(/^payload\.big: integer beyond 2\^53-1/);
  });

  it('records every float beyond 2^53-1 a body can hold (the recording walk is skipped only for bodies with none)', () => {
    const digits = fc
      .tuple(fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 20 }))
      .map(([first, rest]) => `${first}${rest.join('')}`);
    const token = fc
      .tuple(
        fc.constantFrom('', '-'),
        digits,
        fc.nat(20),
        fc.option(fc.tuple(fc.constantFrom('e', 'E', 'e+', 'E+', 'e-'), fc.nat(25))),
      )
      .filter(([, mantissa, point]) => point < mantissa.length)
      .map(([sign, mantissa, point, exponent]) => {
        const cut = mantissa.length - point;
        const written = point === 0 ? mantissa : `${mantissa.slice(0, cut)}.${mantissa.slice(cut)}`;
        return `${sign}${written}${exponent === null ? '' : exponent.join('')}`;
      });
    const shapes = ['{"n":%}', '{"a": [1, %]}', '{"a":{"b" :\n %}}'];
    fc.assert(
      fc.property(token, fc.constantFrom(...shapes), (written, shape) => {
        const value = Number(written);
        fc.pre(Number.isInteger(value) && !Number.isSafeInteger(value));
        const body = parseJsonObjectBody(shape.replace('%', written));
        fc.pre(body.ok);
        if (!body.ok) return;
        expect([written, fault(body.payload)]).toEqual([written, null]);
      }),
      { numRuns: 3000 },
    );
  });
});
