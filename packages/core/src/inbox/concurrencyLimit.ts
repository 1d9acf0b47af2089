/** Runs `task` once a slot is free; settles as the task settles. */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * At most `concurrency` tasks run at once; the others wait in arrival order. A task that
 * rejects (or throws before returning its promise) frees its slot like one that resolves.
 * (Our own, rather than p-limit: p-limit ships as an ES module only, which jest cannot load
 * in an application's CommonJS tests on Node 20.)
 */
export function concurrencyLimit(concurrency: number): Limit {
  let running = 0;
  const waiting: (() => void)[] = [];
  return <T>(task: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const run = () => {
        running += 1;
        Promise.resolve()
          .then(task)
          .then(resolve, reject)
          .finally(() => {
            running -= 1;
            waiting.shift()?.();
          });
      };
      if (running < concurrency) run();
      else waiting.push(run);
    });
}
