/**
 * Why a number cannot travel through JSON and PostgreSQL unchanged, or null. `written` is how
 * it is written in JSON: the token a body holds, or String(value) for a value emit serializes;
 * `where` (e.g. ` at $.id`) is put into the reason after what the number is.
 * - an integer written as digits beyond 2^53-1: JavaScript rounds it (12345678901234567891
 *   reads as 12345678901234567000), so neighbouring ids would collapse into one;
 * - a number beyond the range of a JavaScript number (1e400 reads as Infinity, stored as null)
 *   or too small for one (1e-400 reads as 0);
 * - negative zero: JSON.stringify writes it as 0, and PostgreSQL's jsonb keeps -0 as 0.
 * A number written with a fraction or an exponent is a float: it reads as the nearest double,
 * as in every JSON reader (0.10000000000000001 is 0.1), and is not refused for that.
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
  if (INTEGER.test(written) && !Number.isSafeInteger(value)) {
    return `integer beyond 2^53-1${where}, which JavaScript cannot keep exactly; send it as a string`;
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
 * numberFault for a number JSON.parse read from a body parseJsonObjectBody let through
 * (noteParsedBody): the body's text was scanned (inexactNumberFault), which refuses every integer
 * beyond 2^53-1 written as digits, so one here was written with a fraction or an exponent (1.5e17,
 * as Python and Java write a large double). It is a float, kept as the nearest double and read back
 * as it (storedNumberFault); no other rule is waived.
 */
export function parsedNumberFault(value: number): string | null {
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? null : valueNumberFault(value);
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
 * How JavaScript writes `value` (String: -0 as `0`), an exponent of 21 or more written out in
 * plain digits (`1e+21`: `1000000000000000000000`).
 */
function digitsOf(value: number): string {
  const written = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e\+(\d+)$/.exec(written);
  if (match === null) return written;
  const [, sign, first, fraction = '', exponent] = match;
  return `${sign}${first}${fraction}${'0'.repeat(Number(exponent) - fraction.length)}`;
}

const INTEGER = /^-?\d+$/;
/** A digit 1-9 before any exponent. */
const NONZERO_MANTISSA = /^[^eE]*[1-9]/;

function excerpt(written: string): string {
  return written.length > 40 ? `${written.slice(0, 40)}…` : written;
}
