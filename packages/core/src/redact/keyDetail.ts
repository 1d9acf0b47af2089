/**
 * What PostgreSQL writes after a key's values (`) already exists.`), or the end of a line. The
 * values themselves may hold line breaks (PostgreSQL prints a text value as it is): they run on
 * across lines to the `)` before these words.
 */
const AFTER_VALUES = String.raw`\s+(?:already exists|is not present|is still referenced|conflicts with)\b|\.?[^\S\n]*(?:\n|$)`;

/**
 * PostgreSQL's detail of a key violation: `Key (token)=(s3cret) already exists.`, `Key (a, b)=(1,
 * 2) is not present in table "t".`, also with an expression for a column (`Key ((payload ->>
 * 'token'::text))=(…)`). Groups: the columns, the values, the `)` that closes them (empty where
 * the text ends first). The columns are at most 128 pieces (a character, or a parenthesised run of
 * at most 128): bounded. The values, across lines, run to the `)` PostgreSQL's words follow, else
 * to the end of the text; every scan of values ends in a match, so none is read twice: linear.
 */
export const KEY_DETAIL = new RegExp(
  String.raw`\bKey \(((?:[^()\n]|\([^()\n]{0,128}\)){1,128})\)=\(((?:[^)]|\)(?!${AFTER_VALUES}))*)(\)(?=${AFTER_VALUES})|$)`,
  'g',
);

/** The end of a line, after an optional full stop. */
const LINE_END = String.raw`\.?[^\S\n]*(?:\n|$)`;

/**
 * PostgreSQL's detail of a CHECK or NOT NULL violation: `Failing row contains (id, type, {"a":
 * 1}, …).`, the whole row, a payload among it; redacted whole (no column names say which value is
 * which). The values, across lines, run to a `)` at the end of a line, else to the end of the
 * text: linear, as KEY_DETAIL.
 */
export const FAILING_ROW = new RegExp(
  String.raw`\bFailing row contains \((?:[^)]|\)(?!${LINE_END}))*(\)(?=${LINE_END})|$)`,
  'g',
);
