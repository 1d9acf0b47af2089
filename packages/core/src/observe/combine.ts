import { functionOption } from '../optionChecks';

type Observer<E> = (event: E) => unknown;

/**
 * One observer that hands every event to each given observer in turn (`undefined` ones are
 * skipped), e.g. the metrics observer beside one of your own. Each is called even when an earlier
 * one threw or rejected; the first such failure is then thrown (or the returned promise rejects
 * with it), so the component's safeEmit logs it as for a single observer. An argument that is
 * neither a function nor undefined is refused at once (FerryConfigError on `observers[i]`), as a
 * component refuses such an `observer`: unchecked, every event threw (review 111).
 */
export function combineObservers<E>(...observers: ReadonlyArray<Observer<E> | undefined>): Observer<E> {
  const present: Observer<E>[] = [];
  for (let index = 0; index < observers.length; index += 1) {
    const observer = functionOption(`observers[${index}]`, observers[index]);
    if (observer !== undefined) present.push(observer);
  }
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
