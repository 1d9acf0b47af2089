import { DEFAULT_ENVELOPE_LIMITS, FERRY_HEADERS, INBOX_INPUT_LIMITS } from '@ferry/core';
import { headersFault } from '../../src/validate/headers';

const plain = (count: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`h${i}`, 'v']));
const ferry: Record<string, string> = Object.fromEntries(
  Object.values(FERRY_HEADERS).map((name) => [name, 'x']),
);

test("acceptance's header count leaves out ferry's own headers, which a publisher adds to an event emit accepted", () => {
  const delivered = { ...plain(DEFAULT_ENVELOPE_LIMITS.maxHeaders), ...ferry };
  expect(headersFault(delivered, INBOX_INPUT_LIMITS, false)).toBeNull();
});

test('one header over the limit besides ferry’s is still headers_too_large', () => {
  const delivered = { ...plain(INBOX_INPUT_LIMITS.maxHeaders + 1), ...ferry };
  expect(headersFault(delivered, INBOX_INPUT_LIMITS, false)?.rule).toBe('headers_too_large');
});

test("ferry's headers still count toward the byte limit", () => {
  const delivered = { [FERRY_HEADERS.tracestate]: 'x'.repeat(INBOX_INPUT_LIMITS.maxHeaderBytes) };
  expect(headersFault(delivered, INBOX_INPUT_LIMITS, false)?.rule).toBe('headers_too_large');
});
