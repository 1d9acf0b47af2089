import type { CommandContext } from '../command';
import { outboxScope } from '../scope';
import { isJson, positionalCount, requiredFlag } from '../usage';
import { reportOutcomes } from './outboxRetry';

export async function outboxMarkFailedCommand({ args, io, db }: CommandContext): Promise<number> {
  const [id] = positionalCount(args, 'event id', 1, 1) as [string];
  const reason = requiredFlag(args, 'reason');
  const scope = outboxScope(args);
  const result = await db((executor) => scope(executor).markFailed(id, reason));
  return reportOutcomes(io, isJson(args), 'outbox mark-failed', [result]);
}
