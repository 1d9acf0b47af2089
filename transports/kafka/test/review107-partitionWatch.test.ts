/**
 * Review 107: the partition watch of review 106 (the @platformatic/kafka group leader reads the
 * consumed topics' partition counts every metadataMaxAgeMs) started a read at every tick of its
 * interval, whether the last one had answered or not. A read lasts up to the client's request
 * timeout times its retries (30 s and 3 by default, the interval's own default is 30 s): a broker
 * slow to answer, or a short metadataMaxAgeMs, piled up metadata requests, one more per tick,
 * each forcing a refresh. Now a tick skips while a read is in flight. Pure logic: fake timers,
 * the read a promise the test settles.
 */
import { PartitionWatch, type PartitionCounts } from '../src/client/partitionWatch';

describe('review107: PartitionWatch reads one at a time', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function watchWith(read: () => Promise<PartitionCounts>) {
    let rejoins = 0;
    const watch = new PartitionWatch(1_000, read, () => (rejoins += 1));
    return { watch, rejoins: () => rejoins };
  }

  it('a read that does not answer: no other read starts until it settles, the next tick reads again', async () => {
    let reads = 0;
    let answer: (counts: PartitionCounts) => void = () => undefined;
    const { watch, rejoins } = watchWith(() => {
      reads += 1;
      return new Promise((resolve) => (answer = resolve));
    });
    watch.joined(true, new Map([['orders', 1]]));
    await jest.advanceTimersByTimeAsync(10_500);
    expect(reads).toBe(1);
    answer(new Map([['orders', 2]]));
    await jest.advanceTimersByTimeAsync(0);
    expect(rejoins()).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(reads).toBe(2);
    watch.stop();
  });

  it('a read that fails frees the next tick', async () => {
    let reads = 0;
    const { watch } = watchWith(async () => {
      reads += 1;
      throw new Error('metadata refused');
    });
    watch.joined(true, new Map([['orders', 1]]));
    await jest.advanceTimersByTimeAsync(3_500);
    expect(reads).toBe(3);
    watch.stop();
    await jest.advanceTimersByTimeAsync(3_000);
    expect(reads).toBe(3);
  });
});
