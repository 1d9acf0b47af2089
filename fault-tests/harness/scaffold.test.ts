import { faultSuite } from './scaffold';

describe('faultSuite', () => {
  const undone: string[] = [];
  const suite = faultSuite(200);

  afterAll(() => {
    // Ran after the suite's own hook: every step, last-registered first, past a throw and a hang.
    expect(undone).toEqual(['gate', 'hanging', 'throwing', 'connection']);
  });

  it('undoes every deferred step after the tests, in reverse, bounded, failures ignored', () => {
    suite.defer(() => undone.push('connection'));
    suite.defer(() => {
      undone.push('throwing');
      throw new Error('close failed');
    });
    suite.defer(
      () => {
        undone.push('hanging');
        return new Promise(() => undefined);
      },
      () => undone.push('gate'),
    );
    expect(undone).toEqual([]);
  });
});
