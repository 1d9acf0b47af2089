import { cleanUp, faultSuite } from './scaffold';

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

describe('cleanUp (review 75: a file-level afterAll of several steps)', () => {
  it('runs every step in order, each bounded, whatever the earlier ones did, then throws what failed', async () => {
    const ran: string[] = [];
    const outcome = await cleanUp(
      [
        () => {
          ran.push('drop');
          throw new Error('drop failed');
        },
        () => {
          ran.push('hanging');
          return new Promise(() => undefined);
        },
        async () => {
          ran.push('dispose');
        },
      ],
      200,
    ).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    expect(ran).toEqual(['drop', 'hanging', 'dispose']);
    expect(outcome).toBeInstanceOf(AggregateError);
    expect((outcome as AggregateError).errors.map(String)).toEqual([
      'Error: drop failed',
      expect.stringMatching(/did not finish within 200 ms/),
    ]);
  });

  it('resolves when every step succeeded', async () => {
    await expect(cleanUp([() => undefined, async () => undefined])).resolves.toBeUndefined();
  });
});
