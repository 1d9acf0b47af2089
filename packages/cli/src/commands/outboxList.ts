import type { OutboxStatus } from '@ferry/core';
import type { CommandContext } from '../command';
import { outboxLine } from '../format';
import { outboxScope } from '../scope';
import { isJson, optionalFlag, optionalInteger, positionalCount, requiredChoice } from '../usage';

const STATUSES: readonly OutboxStatus[] = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'];

export async function outboxListCommand({ args, io, db }: CommandContext): Promise<number> {
  positionalCount(args, 'arguments', 0, 0);
  const status = requiredChoice(args, 'status', STATUSES);
  const limit = optionalInteger(args, 'limit');
  const cursor = optionalFlag(args, 'cursor');
  const scope = outboxScope(args);
  const page = await db((executor) => scope(executor).list({ status, limit, cursor }));
  if (isJson(args)) {
    io.out(JSON.stringify(page));
    return 0;
  }
  for (const record of page.items) io.out(outboxLine(record));
  if (page.nextCursor !== null) io.err(`ferry outbox list: more rows: --cursor ${page.nextCursor}`);
  return 0;
}
