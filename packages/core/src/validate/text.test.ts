import { escapeUnshowable, identifierFault } from './text';

describe('identifierFault', () => {
  it.each([
    ['', 'must not be empty'],
    [' \t', 'must not be only whitespace'],
    ['\u200b', 'must not be only invisible characters (U+200B)'],
    ['\u200d\u2060', 'must not be only invisible characters (U+200D U+2060)'],
    [' \ufeff\u00ad\u3164', 'must not be only invisible characters (U+0020 U+FEFF U+00AD U+3164)'],
    ['\u{E0061}\u{E0062}', 'must not be only invisible characters (U+E0061 U+E0062)'],
    ['\u200b'.repeat(100), /^must not be only invisible characters \((U\+200B ){7}U\+200B …\)$/],
    ['a\u0007', 'must not contain a control character (U+0007)'],
    ['a\u2028b', 'must not contain a line break (U+2028)'],
    ['a\u2029', 'must not contain a line break (U+2029)'],
    ['\u2800', 'must not be only invisible characters (U+2800)'],
    ['\u2800\u2800 \u2800', 'must not be only invisible characters (U+2800 U+2800 U+0020 U+2800)'],
    ['order-\u202e1-tnuocca', 'must not contain a bidirectional control (U+202E)'],
    ['\u2067acme\u2069', 'must not contain a bidirectional control (U+2067)'],
    ['acme\u202a', 'must not contain a bidirectional control (U+202A)'],
  ])('refuses %j: %s', (id, reason) => {
    if (typeof reason === 'string') expect(identifierFault(id)).toBe(reason);
    else expect(identifierFault(id)).toMatch(reason);
  });

  it.each([
    'order-1',
    '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}',
    'a\u200bb',
    '\u05e9\u05dc\u05d5\u05dd\u200f',
    '  padded  ',
    '\u00e9',
  ])('accepts %j', (id) => {
    expect(identifierFault(id)).toBeNull();
  });
});

describe('escapeUnshowable', () => {
  it('escapes what identifierFault refuses as a control, line break or bidirectional control', () => {
    expect(escapeUnshowable('a\u0000b\nc\u001b[2J\u007f\u009b\u2028\u202e\u2069 \\ é\u200b')).toBe(
      'a\\u0000b\\u000ac\\u001b[2J\\u007f\\u009b\\u2028\\u202e\\u2069 \\ é\u200b',
    );
    for (const c of ['\u0001', '\u001f', '\u0085', '\u2029', '\u202a', '\u2066']) {
      expect(identifierFault(`x${c}`)).not.toBeNull();
      expect(escapeUnshowable(c)).toMatch(/^\\u[0-9a-f]{4}$/);
    }
  });
});
