export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  flags: Record<string, string>;
}

/** Flags that never take a value, so `--json <id>` keeps `<id>` positional. */
export const BOOLEAN_FLAGS: ReadonlySet<string> = new Set(['json', 'global', 'help']);

/** `--name value` and `--name=value` flags; everything else is positional. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
      continue;
    }
    const name = arg.slice(2);
    const next = argv[i + 1];
    if (!BOOLEAN_FLAGS.has(name) && next !== undefined && !next.startsWith('--')) {
      flags[name] = next;
      i += 1;
    } else {
      flags[name] = 'true';
    }
  }
  const [command, ...rest] = positionals;
  return { command, positionals: rest, flags };
}
