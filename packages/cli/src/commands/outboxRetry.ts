import type { AdminResult } from '@ferry/core';
import type { CliIo, CommandContext } from '../command';
import { outboxScope } from '../scope';
import { isJson, positionalCount } from '../usage';

/** One `<id> <outcome>` line each; exit 1 unless every outcome is `applied`. */
export function reportOutcomes(io: CliIo, json: boolean, command: string, results: AdminResult[]): number {
  if (json) io.out(JSON.stringify(results));
  else for (const { id, outcome } of results) io.out(`${id} ${outcome}`);
  const failed = results.filter((r) => r.outcome !== 'applied').length;
  if (failed === 0) return 0;
  io.err(`ferry ${command}: ${failed} of ${results.length} not applied`);
  return 1;
}

export async function outboxRetryCommand({ args, io, db }: CommandContext): Promise<number> {
  const ids = positionalCount(args, 'event ids', 1, 1_000);
  const scope = outboxScope(args);
  const results = await db((executor) => scope(executor).retryMany(ids));
  return reportOutcomes(io, isJson(args), 'outbox retry', results);
}
