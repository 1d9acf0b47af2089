/**
 * The one strict UTF-8 decoder of the transports (strictUtf8Text): bytes that are not UTF-8 give
 * no text, never U+FFFD in their place; bodies (parseJsonObjectBytes) and ferry's headers
 * (readFerryHeaders) decode through it.
 */
import { parseJsonObjectBytes, readFerryHeaders, strictUtf8Text } from '../../src/transport';

test('bytes that are not UTF-8 give no text; UTF-8 is decoded as it is, a byte order mark kept', () => {
  expect(strictUtf8Text(Buffer.from([0xff, 0x61]))).toBeUndefined();
  expect(strictUtf8Text(Buffer.from([0xfe, 0x61]))).toBeUndefined();
  expect(strictUtf8Text(Buffer.from([0xed, 0xa0, 0x80]))).toBeUndefined();
  expect(strictUtf8Text(Buffer.from('é\uFFFD', 'utf8'))).toBe('é\uFFFD');
  expect(strictUtf8Text(Buffer.from('\uFEFFa', 'utf8'))).toBe('\uFEFFa');
});

test('a body is strict UTF-8 (a leading byte order mark is not JSON); a header too', () => {
  expect(parseJsonObjectBytes(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({
    ok: false,
    detail: 'body is not valid UTF-8',
  });
  expect(parseJsonObjectBytes(Buffer.from('\uFEFF{"a":1}', 'utf8'))).toEqual({ ok: true, payload: { a: 1 } });
  expect(readFerryHeaders(() => Buffer.from([0xff, 0x61]))).toMatchObject({
    messageId: undefined,
    fault: expect.stringContaining('not valid UTF-8'),
  });
});
