/**
 * Acceptance writes a payload's text in canonical key order (payloadText, jsonText `canonical`)
 * and fingerprints that text without parsing it again (canonicalTextFingerprint). Property: for
 * any JSON object, the text is exactly canonicalJson's of the value, so a receipt's fingerprint
 * is the one payloadFingerprint gives (as every earlier version stored it), and the text reads
 * back as the same value.
 */
import fc from 'fast-check';
import { canonicalJson, payloadFingerprint } from '../../src/inbox/fingerprint';
import { canonicalTextFingerprint } from '../../src/inbox/fingerprint';
import { payloadText } from '../../src/inbox/validateInput';

/** Keys JSON.parse and V8 order apart from insertion: integer-like, __proto__, astral, empty. */
const key = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('__proto__', 'constructor', '0', '1', '10', '2', '-1', '01', '', '\ud83d\ude00', 'é', 'Z'),
  fc.nat({ max: 30 }).map(String),
);
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.string({ maxLength: 8 }),
    fc.array(tie('json'), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.dictionary(key, tie('json'), { maxKeys: 6 }),
}));

describe('payloadText writes canonical JSON', () => {
  it('is canonicalJson of the value, and its fingerprint is payloadFingerprint', () => {
    fc.assert(
      fc.property(value.object, (payload) => {
        const written = payloadText(payload, 1_000_000);
        if (!('json' in written)) return; // refused (a number JSON would change): no text to compare
        expect(written.json).toBe(canonicalJson(payload));
        expect(JSON.parse(written.json)).toEqual(JSON.parse(JSON.stringify(payload)));
        expect(canonicalTextFingerprint(written.json)).toBe(payloadFingerprint(payload));
        expect(canonicalTextFingerprint(written.json)).toBe(payloadFingerprint(JSON.parse(written.json)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('orders keys by code unit at every depth, whatever order the object holds them in', () => {
    const written = payloadText({ b: 1, a: { z: [{ y: 1, x: 2 }], '10': 0, '2': 0, é: 0, Z: 0 } }, 1_000);
    expect('json' in written && written.json).toBe(
      '{"a":{"10":0,"2":0,"Z":0,"z":[{"x":2,"y":1}],"é":0},"b":1}',
    );
  });
});
