/**
 * The options of runTransportConformance are checked when it is called: a suite that could
 * only pass vacuously is refused rather than registered.
 */
import { runTransportConformance, type TransportConformanceOptions } from '@ferry/testing/conformance';

const base: Omit<TransportConformanceOptions, 'system'> = {
  name: 'options-check',
  transport: 'memory',
  features: {
    deadLetter: { unsupported: 'not under test' },
    orderingPerKey: { unsupported: 'not under test' },
    redeliveryAfterRestart: { unsupported: 'not under test' },
    unroutableDetection: { unsupported: 'not under test' },
    heldCount: { unsupported: 'not under test' },
  },
  createTransport: () => Promise.reject(new Error('never created')),
};

describe('runTransportConformance options', () => {
  // Without `system` the case "names its messaging system on every delivery" compared the
  // systems offered with [undefined]: a transport naming none passed it.
  it.each([undefined, null, '', '  ', 42])('refuses system %p', (system) => {
    expect(() =>
      runTransportConformance({ ...base, system } as unknown as TransportConformanceOptions),
    ).toThrow(
      "transport conformance (options-check): system (the broker's OpenTelemetry messaging.system) must be a non-empty string",
    );
  });
});
