import type { CommandContext } from '../command';
import { inboxScope } from '../scope';
import { isJson, positionalCount, requiredFlag, requiredInteger } from '../usage';

export async function inboxRequeueCommand({ args, io, db }: CommandContext): Promise<number> {
  const [id] = positionalCount(args, 'receipt id', 1, 1) as [string];
  const expectedVersion = requiredInteger(args, 'expected-version');
  const reason = requiredFlag(args, 'reason');
  const actor = requiredFlag(args, 'actor');
  const scope = inboxScope(args);
  const record = await db((executor) => scope(executor).requeue({ id, expectedVersion, reason, actor }));
  if (isJson(args)) io.out(JSON.stringify(record));
  else io.out(`${record.id} requeued status=${record.status} version=${record.rowVersion}`);
  return 0;
}
