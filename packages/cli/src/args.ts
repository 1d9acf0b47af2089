export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  flags: Record<string, string>;
}

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
    } else {
      const next = argv[i + 1];
      flags[arg.slice(2)] = next !== undefined && !next.startsWith('--') ? next : 'true';
      if (flags[arg.slice(2)] === next) i += 1;
    }
  }
  const [command, ...rest] = positionals;
  return { command, positionals: rest, flags };
}
