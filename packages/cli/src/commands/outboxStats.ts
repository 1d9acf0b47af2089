import type { CommandContext } from '../command';
import { keyValueLines } from '../format';
import { outboxScope } from '../scope';
import { isJson, positionalCount } from '../usage';

export async function outboxStatsCommand({ args, io, db }: CommandContext): Promise<number> {
  positionalCount(args, 'arguments', 0, 0);
  const scope = outboxScope(args);
  const stats = await db((executor) => scope(executor).stats());
  if (isJson(args)) io.out(JSON.stringify(stats));
  else for (const line of keyValueLines({ ...stats })) io.out(line);
  return 0;
}
