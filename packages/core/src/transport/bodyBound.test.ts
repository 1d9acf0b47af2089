import fc from 'fast-check';
import {
  MAX_BYTES_PER_PAYLOAD_BYTE,
  nestedBodyFault,
  oversizeBodyFault,
  payloadSizeFault,
} from './bodyBound';
import { parseJsonObjectBody } from './body';
import { INBOX_INPUT_LIMITS } from '../inbox/validateInput';
import { jsonText } from '../validate/json';
import { payloadNumberRule } from '../validate/parsedBodies';

/** `value` as JSON with every UTF-16 unit of every string (keys too) written as a `\uXXXX` escape. */
function escapedJson(value: unknown, indent: number, depth = 0): string {
  const escape = (text: string): string =>
    `"${Array.from({ length: text.length }, (_, i) => `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"`;
  const line = indent > 0 ? `\n${' '.repeat(indent * (depth + 1))}` : '';
  const close = indent > 0 ? `\n${' '.repeat(indent * depth)}` : '';
  if (typeof value === 'string') return escape(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${value.map((v) => line + escapedJson(v, indent, depth + 1)).join(',')}${close}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    const members = entries.map(([k, v]) => `${line}${escape(k)}: ${escapedJson(v, indent, depth + 1)}`);
    return `{${members.join(',')}${close}}`;
  }
  return JSON.stringify(value);
}

describe('oversizeBodyFault', () => {
  it('never refuses a payload within the limit, whatever escapes and whitespace its body is written with', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()),
        fc.integer({ min: 0, max: 10 }),
        fc.boolean(),
        (payload, indent, bytes) => {
          const limit = Buffer.byteLength(JSON.stringify(payload), 'utf8');
          const body = `\uFEFF${escapedJson(payload, indent)}\n\n`;
          expect(JSON.parse(body.slice(1))).toEqual(JSON.parse(JSON.stringify(payload)));
          expect(oversizeBodyFault(bytes ? Buffer.from(body, 'utf8') : body, limit)).toBeNull();
        },
      ),
    );
  });

  it('takes every character escaped, at the bound exactly', () => {
    const payload = { a: 'x'.repeat(100) };
    const limit = Buffer.byteLength(JSON.stringify(payload));
    const body = escapedJson(payload, 0);
    // Every byte of the compact text but the structure (`{`, `:`, `}` and the quotes) is 6 in the body.
    expect(Buffer.byteLength(body)).toBeGreaterThan(5 * limit);
    expect(oversizeBodyFault(body, limit)).toBeNull();
    expect(
      oversizeBodyFault('{"a":"' + 'x'.repeat(MAX_BYTES_PER_PAYLOAD_BYTE * limit) + '"}', limit),
    ).toMatch(/^body is \d+ bytes, \d+ without whitespace between tokens: over 6 × the limit \d+/);
  });

  it('does not count whitespace inside strings as insignificant', () => {
    const body = JSON.stringify({ a: ' '.repeat(700) });
    expect(oversizeBodyFault(body, 100)).toMatch(/over 6 × the limit 100/);
    expect(oversizeBodyFault(Buffer.from(body), 100)).toMatch(/over 6 × the limit 100/);
    expect(oversizeBodyFault(`{"a": "\\"${' '.repeat(700)}"}`, 100)).toMatch(/over 6 × the limit 100/);
    // The same whitespace between tokens is not counted.
    expect(oversizeBodyFault(`{${' '.repeat(700)}"a":1}`, 100)).toBeNull();
  });
});

describe('payloadSizeFault', () => {
  it('measures a parsed payload as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue({ maxDepth: 5 })), (value) => {
        const body = parseJsonObjectBody(JSON.stringify(value));
        if (!body.ok) return;
        const bytes = Buffer.byteLength(JSON.stringify(body.payload));
        expect(payloadSizeFault(body.payload, bytes)).toBeNull();
        expect(payloadSizeFault(body.payload, bytes - 1)).toEqual({
          reason: 'payload_too_large',
          detail: `payload is ${bytes} bytes; the limit is ${bytes - 1}`,
        });
      }),
    );
  });

  it('answers a payload nested past what JSON.stringify can write as the inbox does, never throwing', () => {
    const depth = 200_000;
    const body = parseJsonObjectBody(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    if (!body.ok) throw new Error(body.detail);
    expect(() => JSON.stringify(body.payload)).toThrow(RangeError);
    expect(payloadSizeFault(body.payload, 1)).toEqual({
      reason: 'payload_too_deep',
      detail: expect.stringMatching(/^payload\.a(\[0\]){63} nesting deeper than 64$/),
    });
  });
});

describe('nestedBodyFault', () => {
  it('refuses exactly the bodies whose payload the inbox refuses as too deep', () => {
    for (let depth = 1; depth <= 70; depth += 1) {
      for (const [open, close] of [
        ['[', ']'],
        ['{"k":', '}'],
      ] as const) {
        // The payload object is level 1, each array or object inside it one more.
        const text = `{"a":${open.repeat(depth - 1)}1${close.repeat(depth - 1)}}`;
        const parsed = parseJsonObjectBody(text);
        if (!parsed.ok) throw new Error(parsed.detail);
        const written = jsonText(
          parsed.payload,
          { maxDepth: INBOX_INPUT_LIMITS.maxPayloadDepth, maxChars: Infinity },
          'payload',
          payloadNumberRule(parsed.payload),
        );
        const tooDeep = written.fault?.rule === 'payload_too_deep';
        expect([depth, nestedBodyFault(text) !== null]).toEqual([depth, tooDeep]);
        expect([depth, tooDeep]).toEqual([depth, depth > 64]);
        expect(nestedBodyFault(Buffer.from(text))).toEqual(nestedBodyFault(text));
      }
    }
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestedBodyFault(JSON.stringify({ a: '['.repeat(100), b: '"{'.repeat(100) }))).toBeNull();
    expect(nestedBodyFault(Buffer.from('{"a":"\\"' + '['.repeat(100) + '"}'))).toBeNull();
    // A key holding an escaped quote: the brackets after it are counted.
    expect(nestedBodyFault(`{"a\\"":${'['.repeat(64)}${']'.repeat(64)}}`)).toMatch(
      /^body nests deeper than 64 levels/,
    );
  });
});
