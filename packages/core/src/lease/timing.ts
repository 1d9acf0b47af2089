import { FerryConfigError } from '../errors';

/**
 * The option rule every lease holder enforces, with each component's own option names:
 * `interval * 2 < duration` (a renewal can fail once and the next still lands before the
 * lease expires; the kit also counts the lease lost one interval early) and
 * `interval * tolerance < duration` (the tolerated failures end before the lease would).
 */
export function checkLeaseTiming(
  names: { readonly duration: string; readonly interval: string; readonly tolerance?: string },
  values: { readonly duration: number; readonly interval: number; readonly tolerance?: number },
): void {
  if (values.interval * 2 >= values.duration) {
    throw new FerryConfigError(
      names.interval,
      `must be less than half of ${names.duration} (${values.duration}), got ${values.interval}`,
    );
  }
  if (values.tolerance !== undefined && values.interval * values.tolerance >= values.duration) {
    throw new FerryConfigError(
      names.tolerance ?? names.interval,
      `${names.interval} (${values.interval}) x ${names.tolerance ?? 'tolerance'} (${values.tolerance}) ` +
        `must be less than ${names.duration} (${values.duration})`,
    );
  }
}
