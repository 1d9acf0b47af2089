import { BATCH_OVERHEAD_BYTES, recordBytes, requestChunks } from '../src/requestChunks';
import type { OutboundRecord } from '../src/wire';

const record = (id: string, valueBytes: number, key: string | null = null): OutboundRecord => ({
  id,
  topic: 't',
  key,
  value: Buffer.alloc(valueBytes, 0x61),
  headers: { 'ferry-message-id': id },
});

const ids = (chunks: OutboundRecord[][]) => chunks.map((chunk) => chunk.map((r) => r.id));

describe('requestChunks', () => {
  test('keeps a batch that fits in one send', () => {
    const records = [record('1', 100), record('2', 100)];
    expect(ids(requestChunks(records, 1_048_576))).toEqual([['1', '2']]);
  });

  test('splits in order so that no send is over the limit with its batch header', () => {
    const records = Array.from({ length: 7 }, (_, i) => record(String(i), 300, i % 2 ? 'k' : null));
    const limit = 1_000;
    const chunks = requestChunks(records, limit);
    expect(chunks.flat().map((r) => r.id)).toEqual(records.map((r) => r.id));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      const bytes = BATCH_OVERHEAD_BYTES + chunk.reduce((sum, r) => sum + recordBytes(r), 0);
      expect(bytes).toBeLessThanOrEqual(limit);
    }
    // Greedy: each send but the last could not take the next record.
    for (let i = 0; i + 1 < chunks.length; i += 1) {
      const bytes = BATCH_OVERHEAD_BYTES + chunks[i]!.reduce((sum, r) => sum + recordBytes(r), 0);
      expect(bytes + recordBytes(chunks[i + 1]![0]!)).toBeGreaterThan(limit);
    }
  });

  test('sends a record over the limit alone, between its neighbours', () => {
    const records = [record('small', 10), record('large', 5_000), record('after', 10)];
    expect(ids(requestChunks(records, 1_000))).toEqual([['small'], ['large'], ['after']]);
  });

  test('counts the key and headers, in UTF-8 bytes', () => {
    const plain = record('1', 10);
    const keyed = { ...plain, key: 'é'.repeat(100), headers: { ...plain.headers, note: '€'.repeat(10) } };
    expect(recordBytes(keyed) - recordBytes(plain)).toBe(200 + 2 * 5 + 4 + 30);
  });
});
