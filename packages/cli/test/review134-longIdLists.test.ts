/**
 * Review 134: a bulk command's ids are read in time linear in their number. `ferry outbox retry`
 * with the ids of a listing passed by the shell (`$(cat ids)`: 50,000 ids fit in Linux's 2 MB of
 * arguments) spent 42 s of CPU in argument parsing before anything was checked (no database given
 * answered its usage error then), and `inbox requeue` with `<id>:<version>` 200 s: each id was
 * looked for among those before it and the list copied, for each id. The parsers are fed as
 * commander feeds a variadic argument (each value with the list so far): the list grows in place
 * (no copy per id) and its elements are counted as they are read, through a proxy, so the test
 * measures work, not time.
 */
import { randomUUID } from 'node:crypto';
import { uuids, versionedId, type VersionedId } from '../src/parse';

const COUNT = 2_000;

/** A list whose element reads are counted; the parsers get it as commander's first `previous`. */
function countedList<T>(): { list: T[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy([] as T[], {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { list, reads: () => reads };
}

/** Feeds `values` as commander does a variadic argument: each with what the parser returned so far. */
function feed<T>(
  values: readonly string[],
  parse: (value: string, previous: T[] | undefined) => T[],
  first: T[],
): T[] {
  return values.reduce<T[]>((previous, value) => parse(value, previous), first);
}

describe('review 134: a long list of ids', () => {
  const ids = Array.from({ length: COUNT }, () => randomUUID());

  it('outbox retry / mark-failed ids: no id re-reads the ids before it', () => {
    const { list, reads } = countedList<string>();
    const parsed = feed(ids, uuids, list);
    expect(parsed).toBe(list);
    expect(parsed).toHaveLength(COUNT);
    expect(reads()).toBeLessThan(COUNT);
  });

  it('inbox requeue <id>:<version>: no id re-reads the ids before it', () => {
    const { list, reads } = countedList<VersionedId>();
    const parsed = feed(
      ids.map((id) => `${id}:3`),
      versionedId,
      list,
    );
    expect(parsed).toBe(list);
    expect(parsed).toHaveLength(COUNT);
    expect(reads()).toBeLessThan(COUNT);
  });

  it('still takes each id once, in any case, in the order given', () => {
    const [a, b] = ids as [string, string];
    expect(feed([a, b.toUpperCase(), a.toUpperCase(), b], uuids, [])).toEqual([a, b]);
    expect(feed([`${a}:3`, b, `${a.toUpperCase()}:3`], versionedId, [])).toEqual([
      { id: a, version: 3 },
      { id: b, version: null },
    ]);
    expect(() => feed([`${a}:3`, b, `${a}:4`], versionedId, [])).toThrow(/given twice, at two versions/);
  });
});
