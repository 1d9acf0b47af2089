import { Command, type Option, type ParseOptionsResult } from 'commander';

/**
 * A command whose options that take a value take one, once. Commander takes the word after
 * `--reason` whatever it is, keeps the last of a repeated option and takes an empty value, so
 * `--reason --dry-run` (the reason forgotten) ran for real with the reason "--dry-run",
 * `--tenant a --tenant b` acted on b alone, and `outbox retry --type ""` retried every FAILED
 * event. Here, before anything runs, each is a usage error naming the option (exit 2):
 *
 * - a separate word after it that is a flag: any word starting with `--` (a flag of the command,
 *   of another, or the `--` separator), or a short flag the command knows (`-h`, the program's
 *   `-V`). Any other word starting with `-` is a value (`--reason -1`); `--reason=-h` (the `=`
 *   form) is the way to mean any text starting with `-`;
 * - an option of a command that takes a value given a second time, in either form (none is
 *   repeatable; a flag that takes none, `--all --all`, is harmless and accepted); the
 *   program's own connection options (`--database-url`, `--statement-timeout`) keep the last, as
 *   documented (a wrapper script's default, then the operator's own);
 * - an empty value (`--type ""`, `--type=`: an unset shell variable), which no option takes.
 *
 * Unless help is asked (the `help` command, or `--help` / `-h` in a flag's place, not where a value
 * was due): the help is then printed, exit 0, whatever else the line holds.
 *
 * The program checks the whole command line once, for the options of every command it names
 * (`ferry outbox list`: the program's, then list's), before it parses its own: a value such as
 * `-V` would otherwise print the version first. Commander's program pass reads every word, its
 * subcommands' values too, and takes `-Vendor outage` (the value of `--reason`) for `-V` and
 * more: it printed the version, exit 0, and nothing ran. So the program parses the line with
 * each value of a subcommand's option joined to it (`--reason=-Vendor outage`), a word no
 * command but that option's reads as anything.
 */
export class FerryCommand extends Command {
  override createCommand(name?: string): FerryCommand {
    return new FerryCommand(name);
  }

  override parseOptions(argv: string[]): ParseOptionsResult {
    return super.parseOptions(this.parent === null ? checkValueOptions(this, argv) : argv);
  }
}

/** The option of `commands` spelled `flag` (`--tenant`, `-V`), the innermost command's first. */
function optionOf(commands: readonly Command[], flag: string): Option | undefined {
  for (const command of [...commands].reverse()) {
    const option = command
      .createHelp()
      .visibleOptions(command)
      .find((o) => o.long === flag || o.short === flag);
    if (option !== undefined) return option;
  }
  return undefined;
}

/** Whether `word`, a separate word after a value option, is a flag rather than its value. */
function isFlag(commands: readonly Command[], word: string): boolean {
  return word.startsWith('--') || (/^-[^-]/.test(word) && optionOf(commands, word) !== undefined);
}

/** A refusal of checkValueOptions, given once the whole line is read (help may be asked). */
interface Refusal {
  readonly option: Option;
  readonly why: string;
  readonly code: string;
}

function refuse(command: Command, { option, why, code }: Refusal): never {
  command.error(`error: option '${option.flags}' ${why}`, { code, exitCode: 2 });
}

/** Whether `word`, in a flag's place (no option's value), asks for help: `--help`, `-h`. */
function asksHelp(word: string): boolean {
  return word === '--help' || word === '-h';
}

/** `--reason` and its value as one word (`--reason=-Vendor outage`), as every command reads it. */
function joined(option: Option, value: string): string {
  return option.long === undefined ? `${option.short as string}${value}` : `${option.long}=${value}`;
}

/**
 * `argv` checked (see FerryCommand), as the program parses it: each separate value of a
 * subcommand's option joined to its option. The program's own options take the next word
 * whatever it is, as written.
 */
function checkValueOptions(program: Command, argv: readonly string[]): string[] {
  const commands: Command[] = [program];
  const given = new Set<Option>();
  const parsed: string[] = [];
  // The `help` command, or a help flag in a flag's place anywhere before `--`: the help is
  // printed, whatever this check would refuse (the operator is finding out how to write the line).
  let help = argv[0] === 'help';
  let refusal: Refusal | undefined;
  const refused = (found: Refusal): void => {
    refusal ??= found;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const word = argv[i] as string;
    if (word === '--') {
      parsed.push(...argv.slice(i));
      break;
    }
    if (asksHelp(word)) help = true;
    const current = commands[commands.length - 1] as Command;
    const sub = current.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub !== undefined) commands.push(sub);
    const inline = word.startsWith('--') && word.includes('=');
    const option = optionOf(commands, inline ? word.slice(0, word.indexOf('=')) : word);
    const value = inline ? word.slice(word.indexOf('=') + 1) : argv[i + 1];
    // No word after it: commander's own "argument missing".
    if (sub !== undefined || option?.required !== true || value === undefined) {
      parsed.push(word);
      continue;
    }
    if (!inline) i += 1;
    if (!inline && isFlag(commands, value)) {
      refused({
        option,
        why: `argument missing (${value} is a flag; ${option.long}=${value} gives that text)`,
        code: 'commander.optionMissingArgument',
      });
    } else if (value === '') {
      refused({
        option,
        why: 'argument is empty: give a value, or leave the option out',
        code: 'ferry.emptyOptionValue',
      });
    } else if (program.options.includes(option)) {
      // The program's own options (connection settings: --database-url, --statement-timeout) keep
      // the last, as documented: a wrapper script gives its default and the operator's own follows.
      parsed.push(...(inline ? [word] : [word, value]));
      continue;
    } else if (given.has(option)) {
      refused({ option, why: 'given twice: give it once', code: 'ferry.repeatedOption' });
    }
    given.add(option);
    parsed.push(joined(option, value));
  }
  if (refusal === undefined || help) return parsed;
  refuse(program, refusal);
}
