import type { LoopSource } from './types';

/** The source's time stamps read against the wall clock: its last cycle, its outages' starts. */
export type Stamp = 'lastCycleAt' | 'sessionOutage.since' | 'claimCycling.since' | 'claimCycling.lastAt';

interface Sighting {
  /** The stamp (epoch ms) when it was first seen; null before the loop's first cycle. */
  readonly last: number | null;
  /** The wall clock and the monotonic clock then. */
  readonly wall: number;
  readonly mono: number;
}

/**
 * The wall clock as liveness reads it against a loop's `lastCycleAt`: Date.now() when that cycle
 * is first seen, then moved on by the monotonic clock, so a step of the wall clock (NTP, an
 * operator) after the loop's last cycle neither hides a stalled loop (a step back made its last
 * cycle read as in the future, for the step's length) nor reports a running one dead (a step
 * forward, until its next cycle). A loop's first sighting is the health object's creation. A
 * step between a cycle and its first sighting still counts (the loop's own clock stamped it).
 * The same for the start of an inbox worker's outage (`what`): a step back hid it.
 */
export function loopClock(): (source: LoopSource, last: number | null, what?: Stamp) => number {
  const created: Sighting = { last: null, wall: Date.now(), mono: performance.now() };
  const sightings = new WeakMap<LoopSource, Map<Stamp, Sighting>>();
  return (source, last, what = 'lastCycleAt') => {
    let ofSource = sightings.get(source);
    if (ofSource === undefined) sightings.set(source, (ofSource = new Map()));
    const sighting = ofSource.get(what) ?? created;
    const mono = performance.now();
    if (sighting.last !== last) {
      const wall = Date.now();
      ofSource.set(what, { last, wall, mono });
      return wall;
    }
    return sighting.wall + (mono - sighting.mono);
  };
}
