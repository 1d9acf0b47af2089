/**
 * runTransportConformance hands its `timeoutMs` to jest: every case and hook it registers gets a
 * jest timeout of its own, so a slow broker's cases are not cut off by jest's 5 s default (the
 * application's jest config) while the suite's own waits still have time left. The registration
 * is recorded with jest's functions replaced, nothing runs.
 */
import type { TransportConformanceOptions } from '@ferry/testing/conformance';

interface Registered {
  readonly kind: 'it' | 'beforeEach' | 'afterEach';
  readonly name: string;
  readonly timeout: number | undefined;
}

function registrations(timeoutMs: number): Registered[] {
  const recorded: Registered[] = [];
  jest.isolateModules(() => {
    jest.doMock('../src/conformance/jest', () => ({
      ...jest.requireActual<object>('../src/conformance/jest'),
      describe: (_name: string, body: () => void) => body(),
      it: (name: string, _fn: unknown, timeout?: number) => recorded.push({ kind: 'it', name, timeout }),
      beforeEach: (_fn: unknown, timeout?: number) =>
        recorded.push({ kind: 'beforeEach', name: 'beforeEach', timeout }),
      afterEach: (_fn: unknown, timeout?: number) =>
        recorded.push({ kind: 'afterEach', name: 'afterEach', timeout }),
    }));
    const { runTransportConformance } = jest.requireActual<typeof import('@ferry/testing/conformance')>(
      '@ferry/testing/conformance',
    );
    const options: TransportConformanceOptions = {
      name: 'timeouts',
      transport: 'memory',
      system: 'memory',
      features: {
        deadLetter: true,
        orderingPerKey: true,
        redeliveryAfterRestart: true,
        unroutableDetection: true,
        heldCount: true,
      },
      restartBroker: () => Promise.resolve(),
      createTransport: () => Promise.reject(new Error('never created')),
      timeoutMs,
    };
    runTransportConformance(options);
  });
  return recorded;
}

describe('runTransportConformance timeouts', () => {
  it('gives each case and hook three times timeoutMs (each waits more than once)', () => {
    const recorded = registrations(45_000);
    expect(recorded.filter((r) => r.kind === 'it').length).toBeGreaterThanOrEqual(10);
    const wrong = recorded.filter((r) => r.timeout !== 135_000);
    expect(recorded.filter((r) => r.kind !== 'it')).toHaveLength(2);
    expect(wrong).toEqual([]);
  });
});
