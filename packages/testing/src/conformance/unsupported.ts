import { describe, expect, it } from './jest';
import type { ConformanceFeatures, TransportConformanceOptions } from './types';

/** The title prefix of a case registered for a feature the transport lacks (the summary line counts these as skipped). */
export const SKIPPED_PREFIX = 'skipped: ';

export interface FeatureGate {
  /** True when the transport has `feature`; otherwise notes the feature's case for `registerSkipped`. */
  (feature: keyof ConformanceFeatures): boolean;
  /** Registers one visible case per lacking feature that was asked about, stating the reason. */
  registerSkipped(): void;
}

/**
 * Decides which cases run. A feature declared `true` runs its case; one declared
 * `{ unsupported: reason }` gets a passing case titled
 * `skipped: <feature> not supported by <transport>: <reason>` instead, which checks that the
 * features object really declares it unsupported with a reason. Nothing is left out silently.
 */
export function featureGate(
  options: TransportConformanceOptions,
  featureNames: readonly (keyof ConformanceFeatures)[],
): FeatureGate {
  const { features, name } = options;
  // A feature left out (one added to the suite since the transport's file was written) would
  // otherwise be neither run nor shown as skipped.
  for (const feature of featureNames) {
    const support: unknown = features[feature];
    if (support === true) continue;
    const reason: unknown =
      typeof support === 'object' && support !== null
        ? (support as { unsupported?: unknown }).unsupported
        : undefined;
    if (typeof reason !== 'string' || reason.trim() === '') {
      throw new Error(
        `transport conformance (${name}): features.${feature} must be true or { unsupported: '<reason>' }`,
      );
    }
  }
  if (features.redeliveryAfterRestart === true && options.restartBroker === undefined) {
    throw new Error(
      `transport conformance (${name}): redeliveryAfterRestart is declared, so restartBroker is required`,
    );
  }
  const lacking: (keyof ConformanceFeatures)[] = [];
  const gate = (feature: keyof ConformanceFeatures): boolean => {
    if (features[feature] === true) return true;
    if (!lacking.includes(feature)) lacking.push(feature);
    return false;
  };
  gate.registerSkipped = (): void => {
    if (lacking.length === 0) return;
    describe(`transport conformance: ${name}, features it lacks`, () => {
      for (const feature of lacking) {
        const support = features[feature];
        const reason = support === true ? '' : support.unsupported;
        it(`${SKIPPED_PREFIX}${feature} not supported by ${name}: ${reason}`, () => {
          expect(support).not.toBe(true);
          expect(reason.trim()).not.toBe('');
        });
      }
    });
  };
  return gate;
}
