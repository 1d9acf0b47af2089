import { checkSchema } from '@ferry/core';
import type { CommandContext } from '../command';

export async function checkCommand({ args, io, db }: CommandContext): Promise<number> {
  await db(async (executor) => checkSchema(executor, { migrationsDir: args.flags['migrations-dir'] }));
  io.out('ferry check: schema is ready');
  return 0;
}
