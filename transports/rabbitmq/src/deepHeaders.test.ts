import { createRequire } from 'node:module';
import { cutDeepHeaders, MAX_HEADER_DEPTH } from './deepHeaders';

const codec = createRequire(__filename)('amqplib/lib/codec') as {
  encodeTable(buffer: Buffer, table: Readonly<Record<string, unknown>>, offset: number): number;
  decodeFields(slice: Buffer): Record<string, unknown>;
};

/** A Basic content header payload: class 60, weight, body size, flags, then the properties. */
function headerPayload(headers: Record<string, unknown>, contentType?: string): Buffer {
  const table = Buffer.alloc(65_536);
  const tableBytes = codec.encodeTable(table, headers, 0);
  const head = Buffer.alloc(14);
  head.writeUInt16BE(60, 0);
  head.writeUInt32BE(7, 8);
  head.writeUInt16BE((contentType === undefined ? 0 : 0x8000) | 0x2000 | 0x0080, 12);
  const type = contentType === undefined ? [] : [Buffer.from([contentType.length]), Buffer.from(contentType)];
  const messageId = [Buffer.from([2]), Buffer.from('m1')];
  return Buffer.concat([head, ...type, table.subarray(0, tableBytes), ...messageId]);
}

/** The header table of a payload made by headerPayload, decoded by amqplib. */
function headersOf(payload: Buffer, contentType?: string): Record<string, unknown> {
  const at = 14 + (contentType === undefined ? 0 : 1 + contentType.length);
  const length = payload.readUInt32BE(at);
  expect(payload.subarray(at + 4 + length).toString('latin1')).toBe('\u0002m1');
  return codec.decodeFields(payload.subarray(at + 4, at + 4 + length));
}

function nested(depth: number, array = false): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = array ? [value] : { a: value };
  return value;
}

describe('cutDeepHeaders', () => {
  it('leaves a table of MAX_HEADER_DEPTH nested tables alone', () => {
    expect(cutDeepHeaders(headerPayload({ deep: nested(MAX_HEADER_DEPTH), x: 1 }))).toBeNull();
  });

  it.each([
    ['tables', false],
    ['arrays', true],
  ])('cuts %s one deeper to void there, keeping the other headers and properties', (_name, array) => {
    const payload = cutDeepHeaders(
      headerPayload({ x: 'kept', deep: nested(MAX_HEADER_DEPTH + 5, array as boolean) }, 'application/json'),
    );
    expect(payload).not.toBeNull();
    const headers = headersOf(payload!, 'application/json');
    expect(headers.x).toBe('kept');
    expect(headers.deep).toEqual(
      (() => {
        let value: unknown = null;
        for (let i = 0; i < MAX_HEADER_DEPTH; i += 1) value = array ? [value] : { a: value };
        return value;
      })(),
    );
  });

  it('reads nothing else: no headers, another class, a table it cannot read', () => {
    const plain = headerPayload({ x: 1 });
    expect(cutDeepHeaders(plain)).toBeNull();
    const other = Buffer.from(plain);
    other.writeUInt16BE(50, 0);
    expect(cutDeepHeaders(other)).toBeNull();
    const unknownTag = headerPayload({ deep: nested(MAX_HEADER_DEPTH + 1) });
    unknownTag[14 + 4 + 1 + 4] = 0x51; // the first value's tag: 'Q', no AMQP type
    expect(cutDeepHeaders(unknownTag)).toBeNull();
    const short = headerPayload({ deep: nested(MAX_HEADER_DEPTH + 1) });
    short.writeUInt32BE(0xffff, 14);
    expect(cutDeepHeaders(short)).toBeNull();
  });
});
