import { PartitionGate } from '../src/client/partitionGate';

/** The stream's fetch positions, as the gate moves them (pure bookkeeping: no broker needed). */
function gate(): { readonly gate: PartitionGate; readonly positions: Map<string, bigint> } {
  const positions = new Map<string, bigint>();
  return { gate: new PartitionGate((key, offset) => positions.set(key, offset)), positions };
}

describe('PartitionGate: pause and seek over a stream of every partition (@platformatic/kafka)', () => {
  test('a paused partition admits nothing; other partitions are not affected', () => {
    const { gate: g } = gate();
    g.pause('t:0');
    expect(g.admit('t:0', 5n)).toBe(false);
    expect(g.admit('t:1', 5n)).toBe(true);
    g.resume('t:0');
    expect(g.admit('t:0', 6n)).toBe(true);
  });

  test('after a seek, records are dropped until the sought offset arrives, which clears the seek', () => {
    const { gate: g, positions } = gate();
    g.seek('t:0', 10n);
    expect(positions.get('t:0')).toBe(10n);
    expect(g.seeking('t:0')).toBe(true);
    expect(g.admit('t:0', 14n)).toBe(false);
    expect(g.admit('t:0', 10n)).toBe(true);
    expect(g.seeking('t:0')).toBe(false);
    expect(g.admit('t:0', 11n)).toBe(true);
  });

  test('a record past the sought offset (a fetch in flight moved the position on) moves the position back again', () => {
    const { gate: g, positions } = gate();
    g.seek('t:0', 10n);
    positions.set('t:0', 20n); // the in-flight fetch's response advanced the stream
    expect(g.admit('t:0', 15n)).toBe(false);
    expect(positions.get('t:0')).toBe(10n);
  });

  test('resume re-applies a seek that is still waiting, since records fetched while paused moved the position', () => {
    const { gate: g, positions } = gate();
    g.pause('t:0');
    g.seek('t:0', 10n);
    expect(g.admit('t:0', 12n)).toBe(false);
    positions.set('t:0', 30n);
    g.resume('t:0');
    expect(positions.get('t:0')).toBe(10n);
    expect(g.admit('t:0', 10n)).toBe(true);
  });
});
