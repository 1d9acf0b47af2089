import { createHash } from 'node:crypto';
import { inboxRetryCeilingMs as retryCeilingMs, inboxRetryDelayMs as retryDelayMs } from '../backoff';
import { canonicalJson, payloadFingerprint } from './fingerprint';
import { describeError, redactText } from '../redact/redact';

describe('backoff', () => {
  it('doubles from the base and caps at the maximum', () => {
    expect([1, 2, 3, 4, 30, 2000].map((a) => retryCeilingMs(a, 1000, 5000))).toEqual([
      1000, 2000, 4000, 5000, 5000, 5000,
    ]);
  });
  it('applies full jitter within [0, ceiling] using the injected random source', () => {
    expect(retryDelayMs(3, 1000, 300_000, () => 0)).toBe(0);
    expect(retryDelayMs(3, 1000, 300_000, () => 0.5)).toBe(2000);
    expect(retryDelayMs(3, 1000, 300_000, () => 0.999999)).toBeLessThanOrEqual(4000);
  });
});

describe('fingerprint', () => {
  it('is independent of key order and sensitive to values', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 'x' }] })).toBe('{"a":[{"c":"x","d":2}],"b":1}');
    expect(payloadFingerprint({ a: 1, b: 2 })).toBe(payloadFingerprint({ b: 2, a: 1 }));
    expect(payloadFingerprint({ a: 1 })).not.toBe(payloadFingerprint({ a: 2 }));
    expect(payloadFingerprint({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes non-ASCII text as the Hash object of earlier versions did (UTF-8), so stored receipts still deduplicate', () => {
    const payloads = [
      { s: 'héllo ✓ 🚀 \u200f\u202e עברית', tiny: 5e-324 },
      JSON.parse('{"n":9007199254740993}') as unknown,
      JSON.parse('{"__proto__":{"x":"\\u0000"},"k":"\\ud800"}') as unknown,
      { big: 'x'.repeat(100_000), emoji: '🚀'.repeat(1_000) },
    ];
    for (const payload of payloads) {
      const before = createHash('sha256').update(canonicalJson(payload)).digest('hex');
      expect(payloadFingerprint(payload)).toBe(before);
    }
  });

  it('is the SHA-256 hex of the canonical JSON, as stored by earlier versions', () => {
    expect(payloadFingerprint({ b: 2, a: 1 })).toBe(
      '43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777',
    );
  });
});

describe('redaction', () => {
  it('removes credentials, tokens and e-mail addresses and bounds the length', () => {
    const text = redactText(
      'postgres://app:pw@db/x password=hunter2 Bearer abc.def token: xyz mail bob@example.com',
    );
    expect(text).not.toMatch(/pw@|hunter2|abc\.def|xyz|bob@example/);
    const long = describeError(new Error('x'.repeat(5000)), 100);
    expect(long.length).toBe(100);
    expect(describeError(new TypeError('bad'))).toBe('TypeError: bad');
  });
});
