import type { LoopSource } from './types';

interface Sighting {
  /** The loop's last cycle (epoch ms) when it was first seen; null before its first. */
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
 */
export function loopClock(): (source: LoopSource, last: number | null) => number {
  const created: Sighting = { last: null, wall: Date.now(), mono: performance.now() };
  const sightings = new WeakMap<LoopSource, Sighting>();
  return (source, last) => {
    const sighting = sightings.get(source) ?? created;
    const mono = performance.now();
    if (sighting.last !== last) {
      const wall = Date.now();
      sightings.set(source, { last, wall, mono });
      return wall;
    }
    return sighting.wall + (mono - sighting.mono);
  };
}
