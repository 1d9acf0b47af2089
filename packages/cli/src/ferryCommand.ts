import { Command, type ParseOptionsResult } from 'commander';

/**
 * A command whose options that take a value never take a flag as it. Commander takes the word
 * after `--reason` whatever it is, so `--reason --dry-run` (the reason forgotten) ran for real
 * with the reason "--dry-run". Here a separate word starting with `--` (a flag of the command,
 * of another, or the `--` separator) after such an option is its missing value: a usage error
 * naming the option, before anything runs. `--reason=--dry-run` still means that text. Every
 * subcommand is one too (createCommand), so each command checks its own options.
 */
export class FerryCommand extends Command {
  override createCommand(name?: string): FerryCommand {
    return new FerryCommand(name);
  }

  override parseOptions(argv: string[]): ParseOptionsResult {
    refuseFlagAsValue(this, argv);
    return super.parseOptions(argv);
  }
}

function refuseFlagAsValue(command: Command, argv: readonly string[]): void {
  for (let i = 0; i < argv.length; i += 1) {
    const word = argv[i] as string;
    if (word === '--') return;
    const option = command.options.find((o) => o.required && (o.long === word || o.short === word));
    if (option === undefined) continue;
    const value = argv[i + 1];
    if (value?.startsWith('--') === true) {
      command.error(
        `error: option '${option.flags}' argument missing (${value} is a flag; ${option.long}=${value} gives that text)`,
        { code: 'commander.optionMissingArgument', exitCode: 2 },
      );
    }
    i += 1;
  }
}
