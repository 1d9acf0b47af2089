import fc from 'fast-check';
import { mayHoldInexactNumber, scanNumbers } from '../validate/jsonNumbers';
import { parseJsonObjectBody, parseJsonObjectBytes } from './body';

const refused = (text: string) => {
  const body = parseJsonObjectBody(text);
  return body.ok ? `accepted as ${JSON.stringify(body.payload)}` : body.detail;
};

describe('parseJsonObjectBody refuses a number JSON.parse would change', () => {
  it.each([
    ['{"id": 12345678901234567891}', /^integer beyond 2\^53-1 at \$\.id, .*send it as a string$/],
    ['{"id": 9007199254740992}', /integer beyond 2\^53-1 at \$\.id/],
    ['{"id": -9007199254740993}', /integer beyond 2\^53-1 at \$\.id/],
    [
      '{"a": {"b": [1, 2, {"c": 1e400}]}}',
      /^number 1e400 at \$\.a\.b\[2\]\.c is beyond the range .*Infinity/,
    ],
    ['{"x": -1E+400}', /number -1E\+400 at \$\.x is beyond the range .*-Infinity/],
    ['{"x": 1e-400}', /number 1e-400 at \$\.x is too small .*would become 0\)/],
    ['{"x": -0.000001e-999}', /number -0\.000001e-999 at \$\.x is too small/],
    ['{"x": -0}', /^negative zero at \$\.x, /],
    ['{"x": [-0.0]}', /^negative zero at \$\.x\[0\], /],
    ['{"x": -0e7}', /^negative zero at \$\.x, /],
    // Below the smallest double with a fraction under 300 digits and a two-digit exponent.
    [`{"x": 0.${'0'.repeat(250)}1e-99}`, /^number 0\.0{38}… at \$\.x is too small/],
    [`{"x": -0.${'0'.repeat(250)}5e-90}`, /^number -0\.0{37}… at \$\.x is too small/],
    [`{"x": 0.${'0'.repeat(224)}1e-99}`, /at \$\.x is too small/],
    ['{"a\\"b": {"k,[": 123456789012345678}}', /at \$\.a"b\.k,\[, /],
  ])('%s', (text, reason) => {
    expect(refused(text)).toMatch(reason);
    expect(parseJsonObjectBytes(Buffer.from(text)).ok).toBe(false);
  });

  // A number with a fraction or an exponent is a float, read as the nearest double.
  it.each([
    '{"id": 9007199254740991, "neg": -9007199254740991}',
    '{"r": 0.1234567890123456789e0, "c": 0.10000000000000001, "f": 9007199254740992.0, "e": 1e300}',
    '{"f": 0.30000000000000004, "g": 1.7976931348623157e308, "h": 5e-324, "i": 1e+21}',
    '{"z": 0, "z2": 0.0, "z3": 0e10, "n": -0.5, "m": -0.05, "e": 1E2, "d": 100.000}',
    '{"s": "12345678901234567891 and 1e400 and -0 inside a string", "k": "\\"-0"}',
    '{"12345678901234567891": 1}',
  ])('accepts %s as JSON.parse reads it', (text) => {
    const body = parseJsonObjectBody(text);
    expect(body).toEqual({ ok: true, payload: JSON.parse(text) });
  });

  it('skips the scan only for bodies whose numbers are all kept exactly', () => {
    const digits = (max: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${max}}$`));
    const token = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(fc.constant('0'), digits(20)),
        // Fractions with up to 400 leading zeros: 0.<250 zeros>1e-99 is below the smallest double.
        fc.option(
          fc.oneof(
            digits(20),
            fc
              .tuple(fc.oneof(fc.nat(400), fc.integer({ min: 215, max: 300 })), digits(3))
              .map(([zeros, rest]) => `${'0'.repeat(zeros)}${rest}`),
          ),
        ),
        fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(4))),
      )
      .map(([sign, whole, fraction, exponent]) => {
        const int = whole.length > 1 ? whole.replace(/^0+(?=.)/, '') : whole;
        return `${sign}${int}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : exponent.join('')}`;
      });
    const wrap = fc.constantFrom('{"n":%}', '{"a": [1, %]}', '{"a":[ \n%, 2]}', '{"a":{"b":%}}');
    fc.assert(
      fc.property(token, wrap, (number, shape) => {
        const text = shape.replace('%', number);
        const body = parseJsonObjectBody(text);
        expect(body.ok ? null : body.detail).toBe(scanNumbers(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('does not scan a body whose long digit runs, exponents or -0 are inside strings', () => {
    const strings = {
      sha: '3e1234567890abcdef3e123e45612345678901234567',
      uuid: '123e4567-e89b-12d3-a456-0abc14174000',
      id: '12345678901234567891',
      neg: 'x-0',
    };
    expect(mayHoldInexactNumber(JSON.stringify(strings))).toBe(false);
    expect(mayHoldInexactNumber(JSON.stringify({ ...strings, n: 1e99, f: 0.1234567890123456 }))).toBe(false);
    expect(mayHoldInexactNumber('{"n": 1e300}')).toBe(true);
    expect(mayHoldInexactNumber(`{"n": 0.${'0'.repeat(400)}1}`)).toBe(true);
    expect(refused(`{"n": 0.${'0'.repeat(400)}1}`)).toMatch(/^number 0\.0+… at \$\.n is too small/);
  });

  it('accepts every double JSON.stringify writes, and reads it back as the same number', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        fc.pre(!Object.is(n, -0) && !(Number.isInteger(n) && !Number.isSafeInteger(n) && Math.abs(n) < 1e21));
        const body = parseJsonObjectBody(JSON.stringify({ n }));
        expect(body).toEqual({ ok: true, payload: { n } });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseJsonObjectBody refuses a float beyond 2^53-1 that does not print back as itself', () => {
  // Beyond 2^53-1 every double is an integer, and a float token there reads as the nearest one.
  // It is kept when JavaScript writes that double as the very value the token holds (Python's
  // repr, Java's Double.toString, JSON.stringify of the double: 1e+16, 1.5E17), and refused when
  // it would reach the handler as another number (a BigDecimal as Jackson writes it).
  it.each([
    ['{"orderId": 1.23456789012345678E+18}', '$.orderId', '1234567890123456800'],
    ['{"f": 9007199254740993.0}', '$.f', '9007199254740992'],
    ['{"f": 9007199254740993.5}', '$.f', '9007199254740994'],
    ['{"a": {"b": [1, -1.23456789012345678E+18]}}', '$.a.b[1]', '-1234567890123456800'],
    // 16 significant digits split by the dot, and a two-digit exponent.
    ['{"x": 1234567.890123456789e11}', '$.x', '123456789012345680'],
    ['{"x": [9007199254.740993e+6]}', '$.x[0]', '9007199254740992'],
    ['{"x": 18014398509481985e0}', '$.x', '18014398509481984'],
    ['{"x": 1.8014398509481985e16}', '$.x', '18014398509481984'],
    ['{"x": 12345678901234567890123e-2}', '$.x', '123456789012345680000'],
    ['{"x": 1.0000000000000001e300}', '$.x', '1e+300'],
  ])('%s', (text, path, becomes) => {
    const detail = refused(text);
    expect(detail).toContain(` at ${path} `);
    expect(detail).toContain('2^53-1');
    expect(detail).toContain(`it would become ${becomes}`);
    expect(detail).toMatch(/send it as a string$/);
    expect(parseJsonObjectBytes(Buffer.from(text)).ok).toBe(false);
  });

  it.each([
    '{"py": 1e+16, "java": 1.5E17, "n": 1e20, "neg": -9.2E+18, "avogadro": 6.02214076e+23}',
    '{"f": 150000000000000000.0, "g": 9007199254740992.000, "two54": 1.8014398509481984e16}',
    '{"big": 1e300, "max": 1.7976931348623157e308, "e": 12345678901234567e3, "neg": [-1.5e17]}',
    '{"r": 1234567.890123456e11, "s": 123456789012345680e0, "t": [1234567890.123456e+7]}',
  ])('accepts %s as JSON.parse reads it', (text) => {
    expect(parseJsonObjectBody(text)).toEqual({ ok: true, payload: JSON.parse(text) });
  });

  it('scans a body whose 16 significant digits are split by the dot', () => {
    expect(mayHoldInexactNumber('{"x": 1234567.890123456789e11}')).toBe(true);
    expect(mayHoldInexactNumber('{"x": [1, 1.234567890123456e+17]}')).toBe(true);
  });

  it('refuses exactly the float tokens beyond 2^53-1 whose exact value is not what JavaScript writes for them', () => {
    /** The exact value of a decimal token as digits × 10^scale, in BigInt. */
    const exactOf = (written: string): [bigint, number] => {
      const [, sign, whole, fraction = '', exponent = '0'] =
        /^(-?)(\d+)(?:\.(\d+))?(?:[eE]\+?(-?\d+))?$/.exec(written)!;
      return [BigInt(`${sign}${whole}${fraction}`), Number(exponent) - fraction.length];
    };
    const same = ([a, i]: [bigint, number], [b, j]: [bigint, number]) =>
      i >= j ? a * 10n ** BigInt(i - j) === b : a === b * 10n ** BigInt(j - i);
    // A mantissa of random digits, or the digits JavaScript writes for a double beyond 2^53 (kept),
    // or its exact binary value (kept only when the same), or either with a last digit added.
    const random = fc
      .tuple(fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 24 }))
      .map(([first, rest]): [string, number] => [`${first}${rest.join('')}`, 0]);
    const ofDouble = fc
      .tuple(fc.double({ min: 2 ** 53, max: 1e40, noNaN: true }), fc.nat(3))
      .map(([double, how]): [string, number] => {
        const [digits, scale] = exactOf(how % 2 === 0 ? String(double) : BigInt(double).toString());
        const stripped = digits.toString();
        return how < 2 ? [stripped, scale] : [`${stripped}${how}`, scale - 1];
      });
    const token = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(random, ofDouble),
        fc.integer({ min: 0, max: 30 }),
        fc.oneof(fc.constant(0), fc.integer({ min: -30, max: 30 })),
        fc.constantFrom('e', 'E+', 'E'),
      )
      .filter(([, [mantissa], point]) => point < mantissa.length)
      .map(([sign, [mantissa, scale], point, shift, e]) => {
        const cut = mantissa.length - point;
        const written = point === 0 ? mantissa : `${mantissa.slice(0, cut)}.${mantissa.slice(cut)}`;
        const exponent = scale + point + shift;
        return `${sign}${written}${exponent < 0 ? 'e' : e}${exponent}`;
      });
    fc.assert(
      fc.property(token, (written) => {
        const value = Number(written);
        fc.pre(Number.isFinite(value) && Math.abs(value) >= 2 ** 53);
        const kept = same(exactOf(written), exactOf(String(value)));
        const body = parseJsonObjectBody(`{"n": ${written}}`);
        expect([written, body.ok]).toEqual([written, kept]);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('a leading byte order mark', () => {
  // Not part of the JSON text, whether the body came as bytes (RabbitMQ, Kafka) or as text (SQS,
  // whose consumer dead-lettered such a body as unparseable: review 47).
  it.each([
    ['text', () => parseJsonObjectBody('\uFEFF{"total":1}')],
    ['bytes', () => parseJsonObjectBytes(Buffer.from('\uFEFF{"total":1}', 'utf8'))],
  ])('is left out of a body given as %s', (_kind, parse) => {
    expect(parse()).toEqual({ ok: true, payload: { total: 1 } });
  });

  it('is left out once only: a second one is not JSON', () => {
    expect(parseJsonObjectBody('\uFEFF\uFEFF{}')).toMatchObject({ ok: false });
  });
});
