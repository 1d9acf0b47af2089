/**
 * Review finding (review8). copyHeaders promises a copy amqplib can always encode (a throw inside
 * ConfirmChannel.publish misattributes every later confirm on the channel), but it only checks
 * name lengths and the table size. amqplib's encoder (lib/codec.js encodeFieldValue) reads any
 * nested object with an own `!` key as its typed-value trapdoor, and calls
 * `value.hasOwnProperty('!')` on every nested table. Another client may legitimately send a
 * nested table (or a table inside an array) with a key named `!` or `hasOwnProperty`: amqplib
 * decodes it into exactly such an object, and re-encoding the copy throws ("Unknown type to
 * encode", "value.hasOwnProperty is not a function"). fieldBytes/overlongNameIn even skip
 * objects with `!` as if they were typed values, without checking that `!` names a real type.
 * Numbers too: amqplib decodes a double NaN or -Infinity (a Java client's Double.NaN) to a JS
 * number it then guesses is an integer and writes as int64, which throws ("value" argument is
 * out of bounds).
 * Suggested fix: in copyHeaders, drop (and name in x-ferry-dropped-headers) a header whose value,
 * at any depth, holds a table with an own `hasOwnProperty` key or a `!` key that is not one of
 * amqplib's decoded typed values ({'!': 'decimal'|'timestamp', value}), or a non-finite
 * number as {'!': 'double', value}; or trial-encode each header with amqplib's codec.
 */
import { createRequire } from 'node:module';
import { copyHeaders, MAX_COPY_HEADER_BYTES } from './copyOptions';

const codec = createRequire(__filename)('amqplib/lib/codec') as {
  encodeTable(buffer: Buffer, table: Readonly<Record<string, unknown>>, offset: number): number;
  decodeFields(slice: Buffer): Record<string, unknown>;
};

/** AMQP 0-9-1 field-table wire encoding, as another client writes it. */
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const str = (text: string): Buffer =>
  Buffer.concat([Buffer.from('S'), u32(Buffer.byteLength(text)), Buffer.from(text)]);
const table = (entries: [string, Buffer][]): Buffer => {
  const body = Buffer.concat(
    entries.flatMap(([name, value]) => [Buffer.from([Buffer.byteLength(name)]), Buffer.from(name), value]),
  );
  return Buffer.concat([Buffer.from('F'), u32(body.length), body]);
};
const array = (items: Buffer[]): Buffer => {
  const body = Buffer.concat(items);
  return Buffer.concat([Buffer.from('A'), u32(body.length), body]);
};
/** The delivery's headers as amqplib decodes the wire table (the table's own length prefix stripped). */
const delivered = (entries: [string, Buffer][]): Record<string, unknown> =>
  codec.decodeFields(table(entries).subarray(5));

const encode = (headers: Readonly<Record<string, unknown>>): number =>
  codec.encodeTable(Buffer.alloc(MAX_COPY_HEADER_BYTES), headers, 0);

describe('copyHeaders of headers another client sent', () => {
  it.each([
    ['a nested table with a key "!"', [['x-meta', table([['!', str('bang')]])]]],
    ['a nested table with a key "hasOwnProperty"', [['x-meta', table([['hasOwnProperty', str('yes')]])]]],
    [
      'a double NaN (Java Double.NaN)',
      [['x-ratio', Buffer.concat([Buffer.from('d'), Buffer.from('7ff8000000000000', 'hex')])]],
    ],
    [
      'a double -Infinity',
      [['x-min', Buffer.concat([Buffer.from('d'), Buffer.from('fff0000000000000', 'hex')])]],
    ],
    ['an array holding a table with a key "!"', [['x-list', array([table([['!', str('S')]])])]]],
  ] as [string, [string, Buffer][]][])('%s: the copy is still encodable by amqplib', (_, entries) => {
    const headers = copyHeaders(delivered([['x-app', str('kept')], ...entries]), {
      'x-ferry-reject-reason': 'unparseable_body',
    });
    expect(() => encode(headers)).not.toThrow();
    expect(headers['x-app']).toBe('kept');
  });
});
