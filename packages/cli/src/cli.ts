import { type Command, CommanderError, InvalidArgumentError } from 'commander';
import { fromPg, STATEMENT_TIMEOUT_BOUNDS, type SqlExecutor } from '@ferry/core';
import { describeError, endablePool, MAX_TIMER_MS } from '@ferry/core/transport';
import { Client, type Pool } from 'pg';
import type { CliIo, Context } from './command';
import { UsageError } from './errors';
import { printFailure } from './failure';
import { statementTimeout } from './parse';
import { buildProgram } from './program';

/** The database's connection string and where it came from (an option or variable name). */
interface DatabaseUrl {
  readonly url: string;
  readonly source: '--database-url' | 'FERRY_DATABASE_URL' | 'DATABASE_URL';
}

/**
 * --database-url (as commander parsed it; given once: FerryCommand), else
 * FERRY_DATABASE_URL, else DATABASE_URL. No default: an operator tool that silently picked some
 * local database would migrate or change the wrong one.
 */
function databaseUrl(flag: unknown, env: NodeJS.ProcessEnv): DatabaseUrl | undefined {
  if (typeof flag === 'string') return { url: flag, source: '--database-url' };
  // An empty variable is an unset one (`DATABASE_URL=` in a compose file).
  if (env.FERRY_DATABASE_URL) return { url: env.FERRY_DATABASE_URL, source: 'FERRY_DATABASE_URL' };
  return env.DATABASE_URL ? { url: env.DATABASE_URL, source: 'DATABASE_URL' } : undefined;
}

/**
 * A URL's scheme (`postgres:`, `postgresql:`, `socket:`) or a socket directory (`/var/run/…`):
 * node-postgres reads anything else (`orders`, a bare database name) against `postgres://base`
 * and would answer a typo as an outage of host "base".
 */
const URL_OR_SOCKET = /^(?:[a-z][a-z0-9+.-]*:|\/)/i;

/**
 * The connection string, or a usage error naming where it came from when it is no URL or
 * node-postgres cannot read it (a port that is no number, a broken URL): the operator mistyped
 * it, PostgreSQL never saw it. The error never repeats the string, which may hold a password.
 */
function connectionString({ url, source }: DatabaseUrl): string {
  // node-postgres reads '' as "the defaults": a guessed local database.
  if (url.trim() === '') throw new UsageError(`${source} is empty: give the database's URL`);
  if (!URL_OR_SOCKET.test(url)) {
    throw new UsageError(`${source} is not a URL: give postgres://user:password@host:5432/database`);
  }
  try {
    // node-postgres parses the string when a client is made; nothing connects until connect().
    void new Client({ connectionString: url });
    return url;
  } catch (error) {
    // Its message quotes what it read from the URL (a file named by sslrootcert, sslcert, sslkey):
    // redacted as every error the CLI prints (review 95: a password in such a path was shown).
    throw new UsageError(
      `${source} is not a connection string node-postgres can read (${describeError(error instanceof Error ? error : String(error))})`,
    );
  }
}

/** The statement deadline when neither --statement-timeout nor FERRY_STATEMENT_TIMEOUT is given. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * How much later than the statement deadline the pool's client-side `query_timeout` fires: ferry's
 * own deadlines (a statement's, an admin transaction's, which ends up to 1 s past it) answer
 * first with FERRY_TIMEOUT; `query_timeout` ends what ferry does not bound itself (migrate, check,
 * audit list) when the server goes silent.
 */
const QUERY_TIMEOUT_GRACE_MS = 2_000;

/**
 * --statement-timeout (its syntax checked by commander), else FERRY_STATEMENT_TIMEOUT, else
 * `fallbackMs`; within the command's `bounds`, else a usage error naming where it came from.
 */
function statementTimeoutOf(
  flag: unknown,
  env: NodeJS.ProcessEnv,
  fallbackMs: number,
  bounds: readonly [number, number],
): number {
  const [source, value] =
    typeof flag === 'string'
      ? ['--statement-timeout', flag]
      : ['FERRY_STATEMENT_TIMEOUT', env.FERRY_STATEMENT_TIMEOUT];
  if (value === undefined || value === '') return fallbackMs;
  try {
    return statementTimeout(value, bounds);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new UsageError(`${source} ${error.message}`);
    throw error;
  }
}

/** Aborted by main.ts when standard output's reader closed the pipe (CliIo.closed). */
const stdoutReader = new AbortController();
/** Aborted by main.ts when standard error's reader closed the pipe: notes and errors go nowhere. */
const stderrReader = new AbortController();

/**
 * The reader of `stream` is gone (main.ts, at EPIPE): nothing more is written there, and the
 * command runs to its end and exits with its answer's code (a requeue with a conflict is still 1;
 * exiting 0 at once answered it as done, review 97; a usage error is still 2 with its error line
 * unread, review 100). Standard output's reader gone also stops `top` (CliIo.closed).
 */
export function readerGone(stream: 'stdout' | 'stderr'): void {
  (stream === 'stdout' ? stdoutReader : stderrReader).abort();
}

/** Writes `line` to `stream` unless its reader is gone. */
function writeLine(stream: NodeJS.WriteStream, reader: AbortController, line: string): void {
  if (!reader.signal.aborted) stream.write(`${line}\n`);
}

const consoleIo: CliIo = {
  out: (line) => writeLine(process.stdout, stdoutReader, line),
  err: (line) => writeLine(process.stderr, stderrReader, line),
  isTTY: process.stdout.isTTY === true,
  progress: process.stderr.isTTY === true ? process.stderr : undefined,
  closed: stdoutReader.signal,
};

/**
 * One pool per invocation, opened on first use and closed when the command ends. Besides ferry's
 * own deadlines, its connections carry the statement deadline as `statement_timeout` (the server
 * ends a statement that runs or waits on a lock too long) and, a little later, `query_timeout`
 * (the client stops waiting for a server that went silent). Closing never waits for a silent
 * server (endablePool): a probe such as `health --timeout 1s` exits once it answered, and every
 * command with the outcome it printed.
 */
function lazyDatabase(
  urlOf: () => DatabaseUrl | undefined,
  timeoutMs: () => number,
): { db: Context['db']; close(): Promise<void> } {
  let pool: { readonly pool: Pool; end(): Promise<void> } | undefined;
  let executor: SqlExecutor | undefined;
  return {
    db: (work, defaults) => {
      const url = urlOf();
      if (url === undefined) {
        throw new UsageError(
          'no database: pass --database-url URL or set DATABASE_URL (or FERRY_DATABASE_URL)',
        );
      }
      if (!pool) {
        const statementMs = defaults?.statementTimeoutMs ?? timeoutMs();
        pool = endablePool({
          connectionString: connectionString(url),
          max: 2,
          connectionTimeoutMillis: 10_000,
          // 0 (migrate without a deadline): neither; node-postgres sends no statement_timeout.
          statement_timeout: statementMs,
          query_timeout: statementMs === 0 ? 0 : Math.min(statementMs + QUERY_TIMEOUT_GRACE_MS, MAX_TIMER_MS),
        });
      }
      executor ??= fromPg(pool.pool);
      return work(executor);
    },
    close: async () => {
      await pool?.end();
    },
  };
}

const GROUPS = new Set(['outbox', 'inbox', 'audit']);

/** `ferry outbox retry`, for error lines: the command words at the start of argv. */
function commandName(argv: readonly string[]): string {
  const [first, second] = argv;
  if (first === undefined || first.startsWith('-')) return 'ferry';
  if (GROUPS.has(first) && second !== undefined && !second.startsWith('-')) return `ferry ${first} ${second}`;
  return `ferry ${first}`;
}

/** The deepest command argv names (`outbox` for `ferry outbox frobnicate`), and its words. */
function namedCommand(program: Command, argv: readonly string[]): { command: Command; words: string[] } {
  const words = ['ferry'];
  let command = program;
  for (const word of argv) {
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (word.startsWith('-') || !sub) break;
    words.push(word);
    command = sub;
  }
  return { command, words };
}

/** A usage hint's command: the deepest one argv names (`ferry outbox` for `ferry outbox frobnicate`). */
function helpCommand(program: Command, argv: readonly string[]): string {
  return namedCommand(program, argv).words.join(' ');
}

/**
 * Where a value core refused came from when no flag gave it: a command taking `--actor` that was
 * not given acts as FERRY_ACTOR (actorOf), so a refused actor names the variable.
 */
function valueSources(
  program: Command,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const { command } = namedCommand(program, argv);
  const takesActor = command.options.some((option) => option.long === '--actor');
  return takesActor && command.opts().actor === undefined && env.FERRY_ACTOR ? { actor: 'FERRY_ACTOR' } : {};
}

/**
 * Whether the words after `help` name a command: each word a subcommand of the one before, down to
 * a command without subcommands (words after it are its arguments).
 */
function namesCommand(program: Command, words: readonly string[]): boolean {
  let command = program;
  for (const word of words) {
    if (word.startsWith('-') || command.commands.length === 0) return true;
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) return false;
    command = sub;
  }
  return true;
}

/** argv up to `--`: the words after it are operands, never options (`ferry outbox retry -- --json`). */
function beforeSeparator(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  return end === -1 ? argv : argv.slice(0, end);
}

/** Runs one CLI invocation and returns its exit code: 0 ok, 1 failed, 2 usage. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = consoleIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  // Called once the command line is parsed (by a command's action), when `program` exists:
  // the statement deadline and the database come from commander's parsed options, their one source.
  const timeoutMs = (
    fallbackMs = DEFAULT_STATEMENT_TIMEOUT_MS,
    bounds: readonly [number, number] = STATEMENT_TIMEOUT_BOUNDS,
  ): number => statementTimeoutOf(program.opts().statementTimeout, env, fallbackMs, bounds);
  const database = lazyDatabase(() => databaseUrl(program.opts().databaseUrl, env), timeoutMs);
  const ctx: Context = {
    io,
    env,
    json: beforeSeparator(argv).includes('--json'),
    statementTimeoutMs: timeoutMs,
    db: database.db,
    exitCode: 0,
  };
  let parseError = '';
  const program = buildProgram(ctx, (message) => {
    parseError = message;
  });
  try {
    // `ferry help inbox requeue` = `ferry inbox requeue --help` (commander's help takes one level).
    // A help topic that names no command is parsed without --help: commander's unknown-command
    // usage error (exit 2), as `ferry frob` (with --help it printed the parent's help, exit 0).
    const topic = argv.slice(1);
    const args =
      argv[0] === 'help' && topic.length > 0
        ? [...topic, ...(namesCommand(program, topic) ? ['--help'] : [])]
        : [...argv];
    await program.parseAsync(args, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return 0;
    const bareHelp = error instanceof CommanderError && error.code === 'commander.help';
    const failure = bareHelp ? new CommanderError(2, error.code, 'a subcommand is required') : error;
    const help = helpCommand(program, argv);
    return printFailure(ctx, commandName(argv), failure, parseError, help, valueSources(program, argv, env));
  } finally {
    await database.close();
  }
}
