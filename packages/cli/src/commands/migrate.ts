import { migrate } from '@ferry/core';
import type { CommandContext } from '../command';

export async function migrateCommand({ args, io, db }: CommandContext): Promise<number> {
  const result = await db(async (executor) =>
    migrate(executor, { migrationsDir: args.flags['migrations-dir'] }),
  );
  for (const name of result.applied) io.out(`applied ${name}`);
  io.out(`ferry migrate: ${result.applied.length} applied, ${result.alreadyApplied.length} already applied`);
  return 0;
}
