import { concurrencyLimit } from './concurrencyLimit';

/** A task the test finishes by hand, recording when it started. */
function gate(started: string[], name: string) {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return {
    task: () => {
      started.push(name);
      return done;
    },
    finish: () => finish(name),
    fail: () => fail(new Error(name)),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrencyLimit', () => {
  it('runs at most `concurrency` tasks at once, the others in arrival order as slots free', async () => {
    const limit = concurrencyLimit(2);
    const started: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => gate(started, name)) as [
      ReturnType<typeof gate>,
      ReturnType<typeof gate>,
      ReturnType<typeof gate>,
      ReturnType<typeof gate>,
    ];
    const results = [a, b, c, d].map((g) => limit(g.task));
    await settle();
    expect(started).toEqual(['a', 'b']);
    b.finish();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    a.finish();
    c.finish();
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    d.finish();
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c', 'd']);
  });

  it('frees the slot of a task that rejects or throws, and passes the failure to its caller', async () => {
    const limit = concurrencyLimit(1);
    const started: string[] = [];
    const a = gate(started, 'a');
    const first = limit(a.task);
    const second = limit((): Promise<string> => {
      throw new Error('sync');
    });
    const third = limit(async () => 'third');
    a.fail();
    await expect(first).rejects.toThrow('a');
    await expect(second).rejects.toThrow('sync');
    await expect(third).resolves.toBe('third');
  });
});
