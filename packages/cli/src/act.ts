import type { Command } from 'commander';
import type { Context } from './command';

/**
 * Adapts a command body to commander's action signature: positional arguments first, then
 * the command's options. The body's number becomes the exit code.
 */
export function act<O>(
  ctx: Context,
  body: (options: O, args: unknown[]) => Promise<number | void>,
): (...all: unknown[]) => Promise<void> {
  return async (...all) => {
    const command = all[all.length - 1] as Command;
    const code = await body(command.opts() as O, all.slice(0, -2));
    if (typeof code === 'number') ctx.exitCode = code;
  };
}
