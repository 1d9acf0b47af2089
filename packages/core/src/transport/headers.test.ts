import fc from 'fast-check';
import { textFault } from '../validate/text';
import { putStorableHeader, storableHeaderText } from './headers';

/** Any code point, often a NUL or a lone surrogate. */
const hostileUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constant('\u0000') },
);

describe('storableHeaderText', () => {
  it('keeps text PostgreSQL stores faithfully, from a string or from UTF-8 bytes', () => {
    expect(storableHeaderText('Zürich 🚀')).toBe('Zürich 🚀');
    expect(storableHeaderText(Buffer.from('Zürich 🚀'))).toBe('Zürich 🚀');
    expect(storableHeaderText(Buffer.from('\ufeffbom'))).toBe('\ufeffbom');
    expect(storableHeaderText(new Uint8Array())).toBe('');
  });

  it('refuses NUL, an unpaired surrogate and bytes that are not valid UTF-8', () => {
    expect(storableHeaderText('a\u0000b')).toBeUndefined();
    expect(storableHeaderText(Buffer.from([0x01, 0x00, 0x02]))).toBeUndefined();
    expect(storableHeaderText('\ud800')).toBeUndefined();
    expect(storableHeaderText('x\udc00')).toBeUndefined();
    expect(storableHeaderText(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBeUndefined();
    expect(storableHeaderText(Buffer.from([0xed, 0xa0, 0x80]))).toBeUndefined();
    expect(storableHeaderText(Buffer.from([0xc0, 0x80]))).toBeUndefined();
  });

  it('a string is kept unchanged exactly when it has no text fault', () => {
    fc.assert(
      fc.property(fc.string({ unit: hostileUnit, maxLength: 12 }), (text) => {
        const kept = storableHeaderText(text);
        expect(
          kept === undefined ? textFault(text) !== null : kept === text && textFault(text) === null,
        ).toBe(true);
      }),
    );
  });

  it('bytes are kept exactly when they are valid UTF-8 without NUL, and then re-encode to the same bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 16 }),
          fc.string({ unit: hostileUnit, maxLength: 8 }).map((text) => new Uint8Array(Buffer.from(text))),
        ),
        (bytes) => {
          const kept = storableHeaderText(bytes);
          const faithful = Buffer.from(Buffer.from(bytes).toString('utf8'), 'utf8').equals(bytes);
          expect(kept !== undefined).toBe(faithful && !bytes.includes(0));
          if (kept !== undefined) expect(Buffer.from(kept, 'utf8').equals(bytes)).toBe(true);
        },
      ),
    );
  });
});

describe('putStorableHeader', () => {
  it('puts a header whose name and value are storable text and leaves out any other', () => {
    const headers: Record<string, string> = {};
    putStorableHeader(headers, 'x-app', Buffer.from('kept'));
    putStorableHeader(headers, Buffer.from('x-bytes'), 'kept too');
    putStorableHeader(headers, 'x-bin', Buffer.from([0x00]));
    putStorableHeader(headers, 'x-\u0000name', 'value');
    putStorableHeader(headers, '\ud800', 'value');
    putStorableHeader(headers, Buffer.from([0xff]), 'value');
    putStorableHeader(headers, '', 'value');
    expect(headers).toEqual({ 'x-app': 'kept', 'x-bytes': 'kept too' });
  });

  it('keeps a header named __proto__ as an own header (an assignment set nothing)', () => {
    const headers: Record<string, string> = {};
    putStorableHeader(headers, '__proto__', 'kept');
    putStorableHeader(headers, Buffer.from('__proto__'), 'again');
    expect(Object.entries(headers)).toEqual([['__proto__', 'again']]);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
  });
});

describe('putStorableHeader and reserved names', () => {
  it("keeps ferry's envelope headers by their exact name (a trace header in any case, review 93), drops the transport's own and every other reserved name", () => {
    const headers: Record<string, string> = {};
    for (const name of [
      'x-ferry-message-id',
      'x-ferry-tenant-id',
      'X-Ferry-Tenant-Id',
      'x-ferry-transport-attempts',
      'x-ferry-reject-reason',
      'X-FERRY-MESSAGE-ID',
      'x-ferry-other',
      'traceparent',
      'TraceState',
      'x-app',
    ])
      putStorableHeader(headers, name, 'v');
    expect(Object.keys(headers)).toEqual([
      'x-ferry-message-id',
      'x-ferry-tenant-id',
      'traceparent',
      'tracestate',
      'x-app',
    ]);
  });

  it("keeps no reserved name from an event's own (packed) headers", () => {
    const headers: Record<string, string> = {};
    for (const name of ['x-ferry-tenant-id', 'x-ferry-transport-attempts', 'traceparent', 'x-app'])
      putStorableHeader(headers, name, 'v', 'event');
    expect(headers).toEqual({ 'x-app': 'v' });
  });
});
