import fc from 'fast-check';
import {
  inexactStoredNumberFault,
  mayHoldInexactNumber,
  scanNumbers,
  scanStoredNumbers,
} from './jsonNumbers';
import { storedNumberFault } from './numbers';
import { inexactPayloadOf, noteInexactNumbers, noteInexactPayload } from './storedJson';

/** jsonb-like text: objects of numbers of every kind MAYBE_INEXACT looks for, and strings. */
const storedText = fc
  .dictionary(
    fc.string({ maxLength: 4 }),
    fc.oneof(
      fc.double().map((n) => (Number.isFinite(n) ? String(n) : '0')),
      fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
      fc.constantFrom(
        '-0',
        '1e400',
        '1e-400',
        '12345678901234567891',
        '9007199254740993',
        `0.${'1'.repeat(220)}`,
      ),
      fc.string().map((s) => JSON.stringify(s)),
    ),
  )
  .map(
    (entries) =>
      `{${Object.entries(entries)
        .map(([k, v]) => `${JSON.stringify(k)}: ${v}`)
        .join(', ')}}`,
  );

describe('scanStoredNumbers', () => {
  it('scans exactly when MAYBE_INEXACT matches, and finds what inexactStoredNumberFault finds', () => {
    fc.assert(
      fc.property(storedText, (text) => {
        const scan = scanStoredNumbers(text);
        expect(scan.scanned).toBe(mayHoldInexactNumber(text));
        expect(scan.fault).toBe(inexactStoredNumberFault(text));
        expect(scan.fault).toBe(scan.scanned ? scanNumbers(text, storedNumberFault) : null);
      }),
    );
  });

  it('tells a text that needs no scan from one that was scanned and found exact', () => {
    expect(scanStoredNumbers('{"n": 1, "id": "12345678901234567891"}')).toEqual({
      scanned: false,
      fault: null,
    });
    expect(scanStoredNumbers('{"id": 1234567890123456}')).toEqual({ scanned: true, fault: null });
    expect(scanStoredNumbers('{"id": 12345678901234567891}')).toEqual({
      scanned: true,
      fault: expect.stringContaining('$.id') as string,
    });
  });
});

describe('noteInexactNumbers', () => {
  it('notes the fault for inexactPayloadOf and answers whether the text was scanned', () => {
    const [plain, exact, inexact, parsed] = [{}, {}, {}, {}];
    expect(noteInexactNumbers(plain, '{"n": 1}')).toBe(false);
    expect(noteInexactNumbers(exact, '{"n": 1234567890123456}')).toBe(true);
    expect(noteInexactNumbers(inexact, '{"n": 1e400}')).toBe(true);
    expect(noteInexactNumbers(parsed, { n: 1 })).toBe(false);
    expect([plain, exact, parsed].map(inexactPayloadOf)).toEqual([null, null, null]);
    expect(inexactPayloadOf(inexact)).toMatch(/at \$\.n/);
  });

  it('noteInexactPayload notes the same and returns what it was given', () => {
    const read = { id: 1 };
    expect(noteInexactPayload(read, '{"n": -0}')).toBe(read);
    expect(inexactPayloadOf(read)).toBe(inexactStoredNumberFault('{"n": -0}'));
  });
});

describe('storedNumberFault', () => {
  // jsonb writes every numeric in plain digits: a float accept() stored from a body (1.5e17, as
  // Python and Java write a large double) comes back as a run of digits.
  it.each([
    ['150000000000000000', 1.5e17],
    ['100000000000000000000', 1e20],
    ['-2500000000000000000', -2.5e18],
    ['1000000000000000000000', 1e21],
    ['602214076000000000000000', 6.02214076e23],
    ['9007199254740992', 2 ** 53],
    ['150000000000000000.0', 1.5e17],
  ])('%s reads back as itself (%d): no fault', (written, value) => {
    expect(Number(written)).toBe(value);
    expect(storedNumberFault(value, written)).toBeNull();
  });

  it.each([
    ['12345678901234567891', 'integer beyond 2^53-1'],
    ['9007199254740993', 'integer beyond 2^53-1'],
    ['-9007199254740993', 'integer beyond 2^53-1'],
    ['150000000000000001', 'integer beyond 2^53-1'],
    ['9007199254740993.0', 'integer beyond 2^53-1'],
    ['1000000000000000000001', 'integer beyond 2^53-1'],
    ['-0', 'negative zero'],
  ])('%s reads as another number: a fault', (written, reason) => {
    expect(storedNumberFault(Number(written), written, ' at $.id')).toContain(`${reason} at $.id`);
  });
});
