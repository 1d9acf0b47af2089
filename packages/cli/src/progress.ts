import { SingleBar, Presets } from 'cli-progress';
import type { Context } from './command';

export interface Progress {
  add(done: number, total?: number): void;
  stop(): void;
}

const NONE: Progress = { add: () => undefined, stop: () => undefined };

/** A progress bar on the terminal CliIo.progress names (stderr's), none without one or under --json. */
export function progress(ctx: Context, label: string, total: number): Progress {
  const stream = ctx.io.progress;
  if (stream === undefined || ctx.json) return NONE;
  const bar = new SingleBar(
    { format: `${label} [{bar}] {value}/{total}`, stream, clearOnComplete: true },
    Presets.shades_classic,
  );
  bar.start(Math.max(total, 1), 0);
  return {
    add(done, newTotal) {
      if (newTotal !== undefined) bar.setTotal(Math.max(newTotal, 1));
      bar.increment(done);
    },
    stop: () => bar.stop(),
  };
}
