import { combineObservers, FerryConfigError } from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';

/**
 * Review 111: combineObservers took any argument. One that is no function (`null` from
 * `cond ? mine : null`, the metrics object where its `inbox` observer was meant) made every
 * event throw "observer is not a function", logged as a warning per event for the life of the
 * process, where every component refuses such an `observer` when it is created. It is now refused
 * when the observers are combined, naming its position.
 */
describe('combineObservers arguments (review 111)', () => {
  const metrics = createFerryMetrics();
  afterAll(() => metrics.close());

  it.each([
    ['null', null],
    ['the metrics object', metrics],
    ['a string', 'metrics.inbox'],
    ['a number', 0],
  ])('refuses %s with FerryConfigError naming its position', (_what, bad) => {
    const combine = combineObservers as (...observers: unknown[]) => unknown;
    let thrown: unknown;
    try {
      combine(metrics.inbox, bad);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FerryConfigError);
    expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'observers[1]' });
  });

  it('still skips undefined and counts into the metrics', async () => {
    const seen: string[] = [];
    const combined = combineObservers(metrics.inbox, undefined, (event) => void seen.push(event.type));
    combined({ type: 'accepted', receiptId: 'r1', consumer: 'orders' });
    expect(seen).toEqual(['accepted']);
    expect(await metrics.registry.metrics()).toContain(
      'ferry_inbox_acceptances_total{consumer="orders",outcome="accepted"} 1',
    );
  });
});
