import { INBOX_STATUSES } from '@ferry/core';
import type { CommandContext } from '../command';
import { inboxLine } from '../format';
import { inboxScope } from '../scope';
import { isJson, optionalFlag, optionalInteger, positionalCount, requiredChoice } from '../usage';

export async function inboxListCommand({ args, io, db }: CommandContext): Promise<number> {
  positionalCount(args, 'arguments', 0, 0);
  const status = requiredChoice(args, 'status', INBOX_STATUSES);
  const limit = optionalInteger(args, 'limit');
  const cursor = optionalFlag(args, 'cursor');
  const scope = inboxScope(args);
  const page = await db((executor) => scope(executor).list({ status, limit, cursor }));
  if (isJson(args)) {
    io.out(JSON.stringify(page));
    return 0;
  }
  for (const record of page.records) io.out(inboxLine(record));
  if (page.nextCursor !== null) io.err(`ferry inbox list: more rows: --cursor ${page.nextCursor}`);
  return 0;
}
