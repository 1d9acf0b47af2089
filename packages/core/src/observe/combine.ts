type Observer<E> = (event: E) => unknown;

/**
 * One observer that hands every event to each given observer in turn (`undefined` ones are
 * skipped), e.g. the metrics observer beside one of your own. Each is called even when an earlier
 * one threw or rejected; the first such failure is then thrown (or the returned promise rejects
 * with it), so the component's safeEmit logs it as for a single observer.
 */
export function combineObservers<E>(...observers: ReadonlyArray<Observer<E> | undefined>): Observer<E> {
  const present = observers.filter((observer): observer is Observer<E> => observer !== undefined);
  return (event) => {
    const failures: { error: unknown }[] = [];
    const pending: PromiseLike<unknown>[] = [];
    for (const observer of present) {
      try {
        const result = observer(event);
        if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
          pending.push(result as PromiseLike<unknown>);
        }
      } catch (error) {
        failures.push({ error });
      }
    }
    if (pending.length === 0) {
      if (failures[0]) throw failures[0].error;
      return undefined;
    }
    return Promise.allSettled(pending).then((results) => {
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failures[0]) throw failures[0].error;
      if (rejected) throw rejected.reason;
    });
  };
}
