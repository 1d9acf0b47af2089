import type { CommandContext } from '../command';
import { keyValueLines } from '../format';
import { inboxScope } from '../scope';
import { isJson, positionalCount } from '../usage';

export async function inboxStatsCommand({ args, io, db }: CommandContext): Promise<number> {
  positionalCount(args, 'arguments', 0, 0);
  const scope = inboxScope(args);
  const stats = await db((executor) => scope(executor).stats());
  if (isJson(args)) {
    io.out(JSON.stringify(stats));
    return 0;
  }
  const lines = keyValueLines({
    ...stats.counts,
    total: stats.total,
    oldestPendingAt: stats.oldestPendingAt?.toISOString() ?? null,
    oldestPendingAgeMs: stats.oldestPendingAgeMs,
  });
  for (const line of lines) io.out(line);
  return 0;
}
