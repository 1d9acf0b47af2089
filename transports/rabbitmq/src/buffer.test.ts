import type { Entry } from './batch';
import { DeliveryBuffer } from './buffer';

/** One turn of the event loop (setImmediate callbacks run in order). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function turnsUntil(done: () => boolean, limit = 20): Promise<void> {
  for (let i = 0; i < limit && !done(); i += 1) await turn();
}

function entry(tag: number): Entry {
  return { message: { fields: { deliveryTag: tag } }, channel: {} } as unknown as Entry;
}

/** A buffer whose batches stay in flight until `finish(index)`. */
function heldBuffer(maxBatchSize: number, maxInFlight: number) {
  const batches: number[][] = [];
  const finishers: (() => void)[] = [];
  const buffer = new DeliveryBuffer(maxBatchSize, maxInFlight, (batch) => {
    batches.push(batch.map((e) => e.message.fields.deliveryTag));
    return new Promise<void>((resolve) => finishers.push(resolve));
  });
  return { buffer, batches, finish: (index: number) => finishers[index]?.() };
}

describe('DeliveryBuffer', () => {
  it('fills a free slot beside a batch in flight with the whole burst, not its first socket read', async () => {
    const { buffer, batches } = heldBuffer(10, 2);
    buffer.push(entry(1));
    await turnsUntil(() => batches.length === 1);

    // A burst arriving over two turns, less than a share (10 / 2) in the first.
    buffer.push(entry(2));
    buffer.push(entry(3));
    await turn();
    for (const tag of [4, 5, 6]) buffer.push(entry(tag));
    await turnsUntil(() => batches.length === 2);

    expect(batches).toEqual([[1], [2, 3, 4, 5, 6]]);
  });

  it('starts a lone delivery beside a batch in flight once nothing more arrives', async () => {
    const { buffer, batches } = heldBuffer(10, 2);
    buffer.push(entry(1));
    await turnsUntil(() => batches.length === 1);

    buffer.push(entry(2));
    await turnsUntil(() => batches.length === 2);

    expect(batches).toEqual([[1], [2]]);
  });

  it('starts the deliveries buffered behind full slots when a batch finishes, and drains', async () => {
    const { buffer, batches, finish } = heldBuffer(2, 1);
    for (const tag of [1, 2, 3]) buffer.push(entry(tag));
    await turnsUntil(() => batches.length === 1);
    const drained = buffer.drained();

    finish(0);
    await turnsUntil(() => batches.length === 2);
    finish(1);
    await drained;

    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('starts a batch within a share of turns however long a stream of one delivery per turn lasts', async () => {
    const { buffer, batches } = heldBuffer(8, 1);
    let pushed = 0;
    while (batches.length === 0 && pushed < 40) {
      buffer.push(entry((pushed += 1)));
      await turn();
    }

    // Waiting stops once the buffer holds a share (8 / 1): the stream does not starve the slot.
    expect(batches).toEqual([[1, 2, 3, 4, 5, 6, 7, 8]]);
  });

  it('drains a delivery that arrived just before (close) asked, without a timer', async () => {
    const settled: number[] = [];
    const buffer = new DeliveryBuffer(10, 1, (batch) => {
      settled.push(...batch.map((e) => e.message.fields.deliveryTag));
      return Promise.resolve();
    });
    buffer.push(entry(1));
    await buffer.drained();

    expect(settled).toEqual([1]);
  });
});
