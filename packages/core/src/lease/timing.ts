import { FerryConfigError } from '../errors';
import { describeOption, type OptionValue } from '../optionRelations';

export interface LeaseTimingNames {
  readonly duration: string;
  readonly interval: string;
  readonly tolerance?: string;
}

/**
 * A lease holder's heartbeat interval. The rule every lease holder enforces, with each
 * component's own option names: `interval * 2 < duration` (a renewal can fail once and the next
 * still lands before the lease expires; the kit also counts the lease lost one interval early)
 * and `interval * tolerance < duration` (the tolerated failures end before the lease would).
 *
 * Left out (`interval.value` undefined), the interval is derived from the lease: its default, or
 * a third of the lease when that is shorter (`duration / (tolerance + 1)` for a larger
 * tolerance), so every lease inside its bounds works with the heartbeat at its default. An error
 * names the options the user set and says which value is a default.
 */
export function leaseHeartbeatInterval(
  names: LeaseTimingNames,
  duration: { readonly value: number; readonly given: boolean },
  interval: { readonly value: number | undefined; readonly default: number; readonly min: number },
  tolerance?: { readonly value: number; readonly given: boolean },
): number {
  const leaseOption: OptionValue = { name: names.duration, ...duration };
  const toleranceOption: OptionValue | undefined =
    tolerance === undefined ? undefined : { name: names.tolerance ?? 'tolerance', ...tolerance };
  if (interval.value !== undefined) {
    checkLeaseTiming(
      leaseOption,
      { name: names.interval, value: interval.value, given: true },
      toleranceOption,
    );
    return interval.value;
  }
  const divisor = Math.max(3, (tolerance?.value ?? 1) + 1);
  const derived = Math.min(interval.default, Math.floor(duration.value / divisor));
  if (derived < interval.min) {
    // Only a tolerance the user set gets here: a third of the least lease is above every minimum.
    throw new FerryConfigError(
      toleranceOption?.name ?? names.duration,
      `leaves no ${names.interval} of at least ${interval.min}: ` +
        `${toleranceOption === undefined ? '' : `${describeOption(toleranceOption)} x `}${interval.min} ` +
        `must be less than ${describeOption(leaseOption)}`,
    );
  }
  checkLeaseTiming(leaseOption, { name: names.interval, value: derived, given: false }, toleranceOption);
  return derived;
}

/** Throws FerryConfigError when the three values break the lease rule (leaseHeartbeatInterval). */
export function checkLeaseTiming(
  duration: OptionValue,
  interval: OptionValue,
  tolerance?: OptionValue,
): void {
  if (interval.value * 2 >= duration.value) {
    throw new FerryConfigError(
      interval.given ? interval.name : duration.name,
      `${describeOption(interval)} must be less than half of ${describeOption(duration)}`,
    );
  }
  if (tolerance !== undefined && interval.value * tolerance.value >= duration.value) {
    throw new FerryConfigError(
      tolerance.given ? tolerance.name : interval.name,
      `${describeOption(interval)} x ${describeOption(tolerance)} must be less than ${describeOption(duration)}`,
    );
  }
}
