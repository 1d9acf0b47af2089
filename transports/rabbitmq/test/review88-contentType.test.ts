/**
 * Review finding (failed first), review 88. The charset of a delivery's content type was read by
 * splitting the text at every `;` and unquoting a value only when it began and ended with `"`:
 * - a quoted value holding `;` was cut in two, and its second half read as a parameter of its own
 *   (`application/json; note="a;charset=latin1"` refused as charset `latin1"`, though it names no
 *   charset), and a quoted charset with an escape (`charset="utf\-8"`) was refused as `utf\-8`;
 * - RFC 2231's extended form `charset*=''iso-8859-1` was not read at all: a body the producer
 *   declared Latin-1 was accepted as UTF-8, other text than it sent (contentTypeCharset).
 * Parameters are now parsed as RFC 9110 writes them (tokens and quoted strings with escapes) and
 * RFC 2231's `name*=charset'lang'percent-encoded` value is decoded.
 */
import { contentTypeFault } from '../src/contentType';

const JSON_TYPES = ['application/json'];
const fault = (contentType: string) => contentTypeFault(contentType, JSON_TYPES, true);

describe('the charset of a content type', () => {
  test.each([
    ['a quoted charset', 'application/json; charset="utf-8"'],
    ['a quoted value holding ; before the charset', 'application/json; foo="a;b"; charset=utf-8'],
    ['a quoted value holding ; and charset=', 'application/json; note="a;charset=latin1"'],
    ['a quoted charset with an escape', 'application/json; charset="utf\\-8"'],
    ['an RFC 2231 charset', "application/json; charset*=''utf-8"],
    [
      'an RFC 2231 charset with its own charset and language',
      "application/json; charset*=us-ascii'en'UTF%2D8",
    ],
    ['spaces around =', 'application/json; charset = utf-8'],
    ['a parameter without a value', 'application/json; charset; version=2'],
  ])('%s names UTF-8 (or no charset): accepted', (_what, contentType) => {
    expect(fault(contentType)).toBeNull();
  });

  test.each([
    ['an RFC 2231 charset', "application/json; charset*=''iso-8859-1"],
    ['an RFC 2231 charset, percent-encoded', "application/json; charset*=utf-8''iso%2D8859%2D1"],
    ['a charset after a quoted value holding ;', 'application/json; foo="a;b"; charset=latin1'],
    ['a quoted charset holding ;', 'application/json; charset="latin1;utf-8"'],
    ['a charset whose quote does not end', 'application/json; charset="utf-8'],
  ])('%s not UTF-8 (or unreadable): refused', (_what, contentType) => {
    expect(fault(contentType)).toMatch(/charset/);
  });

  test('a media type is still compared alone, and refused when not listed', () => {
    expect(fault('Application/JSON ; foo="x;y"')).toBeNull();
    expect(fault('text/plain; charset=utf-8')).toMatch(/content type text\/plain is not accepted/);
  });
});
