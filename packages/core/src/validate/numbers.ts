/**
 * Why a number cannot travel through JSON and PostgreSQL unchanged, or null. `written` is how
 * it is written in JSON: the token a body holds, or String(value) for a value emit serializes;
 * `where` (e.g. ` at $.id`) is put into the reason after what the number is.
 * - an integer written as digits beyond 2^53-1: JavaScript rounds it (12345678901234567891
 *   reads as 12345678901234567000), so neighbouring ids would collapse into one;
 * - a number beyond the range of a JavaScript number (1e400 reads as Infinity, stored as null)
 *   or too small for one (1e-400 reads as 0);
 * - negative zero: JSON.stringify writes it as 0, and PostgreSQL's jsonb keeps -0 as 0.
 * - a float (written with a fraction or an exponent) beyond 2^53-1 that JavaScript does not write
 *   back as the very value written: beyond 2^53-1 every double is an integer, and
 *   `1.23456789012345678E+18` (Jackson's BigDecimal 1234567890123456780) reads as
 *   1234567890123456800, `9007199254740993.0` as 9007199254740992. Python's `1e+16`, Java's `1.5E17`
 *   and every double as JSON.stringify writes it (String(value): `1e+21`) print back as themselves.
 * A smaller float reads as the nearest double, as in every JSON reader (0.10000000000000001 is
 * 0.1), and is not refused for that.
 */
export function numberFault(value: number, written: string, where = ''): string | null {
  if (!Number.isFinite(value)) {
    return `number ${excerpt(written)}${where} is beyond the range of a JavaScript number (it would become ${value}); send it as a string`;
  }
  if (value === 0) {
    if (NONZERO_MANTISSA.test(written)) {
      return `number ${excerpt(written)}${where} is too small for a JavaScript number (it would become 0); send it as a string`;
    }
    if (Object.is(value, -0)) return `negative zero${where}, which JSON and PostgreSQL keep as 0`;
  }
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    if (INTEGER.test(written)) {
      return `integer beyond 2^53-1${where}, which JavaScript cannot keep exactly; send it as a string`;
    }
    if (plainDigits(written) !== digitsOf(value)) {
      return `number ${excerpt(written)}${where} is beyond 2^53-1, where JavaScript cannot keep it exactly (it would become ${value}); send it as a string`;
    }
  }
  return null;
}

/**
 * numberFault for a value an application hands to emit() or accept(): judged by how
 * JSON.stringify writes it (String(value)), since its origin cannot be known. 2 ** 53 may already
 * be a rounded result, and 1e20 is written as 21 digits a ferry consumer dead-letters.
 */
export function valueNumberFault(value: number): string | null {
  return numberFault(value, String(value));
}

/**
 * numberFault for a number as PostgreSQL writes a jsonb numeric: always in digits, never with an
 * exponent, so a float accepted from a body (1.5e17: `150000000000000000`) or emitted at 1e21 or
 * above (JavaScript writes `1e+21`, `6.02214076e+23`) comes back as a run of digits. Such a run is
 * no fault when it is exactly the decimal JavaScript writes for the number it reads as (JSON.parse
 * gives back the very value stored, and JSON.stringify writes the same digits again); any other
 * integer beyond 2^53-1 is (12345678901234567891, 9007199254740993: they read as another number),
 * also one written with a zero fraction.
 */
export function storedNumberFault(value: number, written: string, where = ''): string | null {
  // A numeric with a scale (numeric(20,1): jsonb_build_object of such a column) keeps its zero
  // fraction: `9007199254740993.0` is an integer, read as 9007199254740992 all the same.
  const whole = ZERO_FRACTION.exec(written);
  if (whole !== null) return storedNumberFault(value, whole[1]!, where);
  if (INTEGER.test(written) && written === digitsOf(value)) return null;
  return numberFault(value, written, where);
}

const ZERO_FRACTION = /^(-?\d+)\.0+$/;

/**
 * How JavaScript writes `value` (String: -0 as `0`) in plain digits (plainDigits): `1e+21` is
 * `1000000000000000000000`, 1.5e17 `150000000000000000`.
 */
function digitsOf(value: number): string {
  return plainDigits(String(value));
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The exact decimal value of a JSON number token in plain digits, with no exponent, no leading
 * zero (but one before a point), no trailing zero of a fraction, no bare point:
 * `1.23456789012345678E+18` is `1234567890123456780`, `9007199254740993.50` `9007199254740993.5`,
 * `-0.0` `-0`. For a token whose value is finite and not 0 only (its digits then stay within the
 * token's length and the 324 places of a double; `1e-999999999` would be a billion zeros); anything
 * not a number token is returned as it is.
 */
function plainDigits(written: string): string {
  const match = DECIMAL.exec(written);
  if (match === null) return written;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`;
  // Loops, not /0+$/: a regular expression backtracks quadratically over a long run of zeros.
  let first = 0;
  while (first < digits.length && digits[first] === '0') first += 1;
  if (first === digits.length) return `${sign}0`;
  let end = digits.length;
  while (digits[end - 1] === '0') end -= 1;
  const significant = digits.slice(first, end);
  const scale = Number(exponent) - fraction.length + (digits.length - end);
  if (scale >= 0) return `${sign}${significant}${'0'.repeat(scale)}`;
  const point = significant.length + scale;
  return point > 0
    ? `${sign}${significant.slice(0, point)}.${significant.slice(point)}`
    : `${sign}0.${'0'.repeat(-point)}${significant}`;
}

const INTEGER = /^-?\d+$/;
/** A digit 1-9 before any exponent. */
const NONZERO_MANTISSA = /^[^eE]*[1-9]/;

function excerpt(written: string): string {
  return written.length > 40 ? `${written.slice(0, 40)}…` : written;
}

/**
 * The characters PostgreSQL's jsonb text holds for a number JSON.stringify writes as `written`:
 * jsonb keeps a number as a numeric, written back in plain digits with the scale it was read with,
 * never with an exponent, so `1e+308` comes back as 309 digits and `5e-324` as `0.` and 323 zeros
 * before its 5. Without an exponent the text is the same.
 */
export function jsonbNumberLength(written: string): number {
  const lower = written.indexOf('e');
  const e = lower < 0 ? written.indexOf('E') : lower;
  if (e < 0) return written.length;
  const sign = written.startsWith('-') ? 1 : 0;
  const mantissa = written.slice(sign, e);
  const point = mantissa.indexOf('.');
  const digits = mantissa.length - (point < 0 ? 0 : 1);
  // Digits before the point once the exponent has moved it.
  const whole = (point < 0 ? mantissa.length : point) + Number(written.slice(e + 1));
  if (whole >= digits) return sign + whole; // an integer: the digits, then zeros
  if (whole > 0) return sign + digits + 1; // digits with a point among them
  return sign + 2 + -whole + digits; // `0.`, zeros, the digits
}
