/**
 * Redaction must take bounded time: JavaScript cannot interrupt a RegExp, and a worker or relay
 * redacting an error holds the event loop meanwhile. `redact.allow` takes the application's
 * RegExps: a catastrophic one (nested quantifiers, overlapping alternatives) against a long
 * error text would hold it for minutes, so ferry refuses the nested quantifiers at
 * configuration and bounds the time the others may take. The built-in rules must be linear.
 *
 * The cases run in a child process with a kill timeout per case, so a redaction that hangs fails
 * its test instead of freezing the run.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REGISTER_TS } from '../../../../test-support/registerTs';

// The redaction module alone: a child loads it in well under a second (the whole of @ferry/core
// took about 3 s per case).
const REDACTION = path.join(__dirname, '../../src/redact/redact.ts');
/** The guard against a hang, per job: far beyond what these redactions take, far below "minutes". */
const KILL_AFTER_MS = 20_000;

type Outcome =
  | { readonly redacted: string }
  | { readonly code: string; readonly option: string }
  | { readonly killed: true };

interface Job {
  readonly pattern: RegExp | null;
  readonly text: string;
  readonly repeated?: { readonly unit: string; readonly times: number };
}

/**
 * Runs each job in one child process, in order: builds a redactor for its `pattern` (none: the
 * built-in rules) and redacts its text with it. The child writes each answer as a line as soon as
 * it has it, and each job's outcome resolves then; the child is killed when a job runs longer
 * than KILL_AFTER_MS (from the previous answer, or the start), and that job and those after it are
 * `killed`.
 */
function redactAllInChild(jobs: readonly Job[]): { outcomes: Promise<Outcome>[]; exited: Promise<void> } {
  const script = `
    const { createRedactor } = require(${JSON.stringify(REDACTION)});
    for (const [source, flags, given, unit, times] of JSON.parse(process.argv[1])) {
      const text = unit.repeat(times) + given;
      let answer;
      try {
        const redact = createRedactor(source === null ? {} : { allow: [new RegExp(source, flags)] });
        answer = { redacted: redact(text) };
      } catch (error) {
        answer = { code: error.code, option: error.option };
      }
      process.stdout.write(JSON.stringify(answer) + '\\n');
    }`;
  const encoded = jobs.map(({ pattern, text, repeated = { unit: '', times: 0 } }) => [
    pattern?.source ?? null,
    pattern?.flags ?? '',
    text,
    repeated.unit,
    repeated.times,
  ]);
  const resolvers: ((outcome: Outcome) => void)[] = [];
  const outcomes = jobs.map(() => new Promise<Outcome>((resolve) => resolvers.push(resolve)));
  const child = spawn(process.execPath, ['-r', REGISTER_TS, '-e', script, JSON.stringify(encoded)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let kill = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
  let answered = 0;
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.length === 0) continue;
      clearTimeout(kill);
      kill = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
      resolvers[answered]?.(JSON.parse(line) as Outcome);
      answered += 1;
    }
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      clearTimeout(kill);
      for (const answer of resolvers.slice(answered)) answer({ killed: true });
      resolve();
    }),
  );
  return { outcomes, exited };
}

/** Units repeated into long texts for the built-in rules (see their test below). */
const LONG_TEXTS: ReadonlyArray<readonly [unit: string, times: number]> = [
  ['"password":"', 16_000],
  ['\\"password\\":\\"', 12_000],
  ["password: 'a ", 16_000],
  ['authorization: token a,', 9_000],
  ['Authorization: Digest a="', 8_000],
  ['x://a:b/', 50_000],
  ['-----BEGIN PRIVATE KEY----- a', 7_000],
  ['x_11111111111111111111', 9_000],
  ['<password>a', 16_000],
  // A quoted value scanned to its closing quote however long (a passphrase), or to the line's end
  ['password="a b ', 14_000],
  ['password: "x\'', 14_000],
  ["token='a\\", 16_000],
  ['<password>a b ', 12_000],
  // A database URL's password read past a port-like start: to the next '@' or ':' only
  ['password="",', 16_000],
  ['password="it\'s ', 14_000],
  ['password="a\\u00e9 ', 12_000],
  ["password='a\\'", 14_000],
  ['postgres://a:1/', 14_000],
  ['postgres://a:', 16_000],
  ['redis://:1/x', 16_000],
  // Quoted values across lines, in other quotes, SQL's doubled quotes, JSON levels deeper,
  // runs of backslashes (each scanned to its closing quote or the end), AWS key id shapes
  ['password="a\n', 16_000],
  ['password=“a ', 16_000],
  ['password=„a ', 16_000],
  ['password=‘it’s ', 12_000],
  ["password='a''", 14_000],
  ['password=`a ', 16_000],
  ["password='it's ", 14_000],
  ["password=''a", 16_000],
  ['\\\\\\"password\\\\\\":\\\\\\"', 6_000],
  ['password="\\\\\\\\\\\\\\\\', 8_000],
  ['password=\\\\\\\\\\\\\\\\"', 8_000],
  ['password="\\\\\\"', 12_000],
  ['token=“token=‘token=`token="', 7_000],
  ['AKIA0000', 25_000],
  // PostgreSQL key details: values scanned to the ')' its words follow or the line's end
  ['Key (token)=(a) ', 14_000],
  ['Key (token)=(a', 14_000],
  ['Key (a(b)', 20_000],
  ['Key ((x)', 20_000],
  ['Failing row contains (a) ', 8_000],
  ['Failing row contains (', 9_000],
  ['ASIAAAAAAAAAAAAAAAAAAAAAA', 8_000],
  // Values read to their end by valueExtent.ts: brackets never closed or nested deep, YAML block
  // scalars, cookies, quotes written as JSON escapes, values across a detail's lines
  ['password=[', 10_000],
  ['{"password":[', 8_000],
  ['password=[]', 9_000],
  ['password=["a]', 8_000],
  ['password=[[[[[[[[[[', 5_000],
  ['password: |\n ', 8_000],
  ['password: |\n', 8_000],
  ['  password: >-\n', 7_000],
  ['password: | a', 8_000],
  ['Cookie: a=1; b=2', 6_000],
  ['Cookie: a=1;', 8_000],
  ['password\\u0022:\\u0022', 5_000],
  ['password:\\u0022', 6_000],
  ['password%3D', 9_000],
  ['password := ', 8_000],
  ["password=a'", 9_000],
  // A quoted value after a space (review 155), never closed, and a key before spaces with none
  ['password "a ', 16_000],
  ["token 'it's ", 14_000],
  ['password    x ', 12_000],
  ['Key (token)=(a\n', 7_000],
  ['Failing row contains (a\n', 4_000],
];

const NESTED: Job = { pattern: /^(a+)+$/, text: `${'a'.repeat(60)}! password is hunter2` };
// (a|a)* has no nested quantifier but backtracks 2^n ways on a run of n a's that fails.
const EXPONENTIAL: Job = { pattern: /^(a|a)*$/, text: `${'a'.repeat(60)}! password is hunter2` };
const WELL_BEHAVED: Job = {
  pattern: /order 9\d{12}/,
  text: 'order 9000000000001 failed, card 4111111111111111',
};
const WORD: Job = {
  pattern: null,
  text: ' amqp://app:s3cret@broker bob@example.com',
  repeated: { unit: 'x1.', times: 66_667 },
};
const DIGITS: Job = { pattern: null, text: 'x call 555 123 4567', repeated: { unit: '1 ', times: 100_000 } };
const PARENS: ReadonlyArray<readonly [unit: string, times: number]> = [
  ['(1', 100_000],
  ['1(', 100_000],
  ['1-1)', 50_000],
  [' (1', 66_667],
  ['(1)', 66_667],
];
/** The built-in rules' jobs of `text` after each unit of `repeats`, and the job of one of them. */
function repeatedJobs(repeats: typeof PARENS, text: string) {
  const jobs = repeats.map(([unit, times]): Job => ({ pattern: null, text, repeated: { unit, times } }));
  const of = (unit: string, times: number): Job =>
    jobs[repeats.findIndex(([u, t]) => u === unit && t === times)]!;
  return { jobs, of };
}
const parens = repeatedJobs(PARENS, 'x call 555 123 4567');
const longTexts = repeatedJobs(LONG_TEXTS, '\n x call 555 123 4567');
const KEYS: Job = {
  pattern: null,
  text: ' password is hunter2',
  repeated: { unit: 'password', times: 25_000 },
};

/**
 * Every case of this file in one child (a child each took about a second to start, loading
 * TypeScript to transpile the redaction module: 80 cases), started by the first case that asks;
 * each case reads its own outcome. The application's exponential pattern runs last: should it
 * hang, the child is killed and only that case (and none of the built-in rules' cases) fails.
 */
const ALL_JOBS: readonly Job[] = [
  NESTED,
  WELL_BEHAVED,
  WORD,
  DIGITS,
  ...parens.jobs,
  ...longTexts.jobs,
  KEYS,
  EXPONENTIAL,
];
let child: ReturnType<typeof redactAllInChild> | undefined;
function outcomeOf(job: Job): Promise<Outcome> {
  child ??= redactAllInChild(ALL_JOBS);
  const at = ALL_JOBS.indexOf(job);
  if (at < 0) throw new Error('a job not in ALL_JOBS');
  return child.outcomes[at]!;
}
// The child ends (and its CPU time is counted with this file's) before the file does.
afterAll(() => child?.exited);

describe('catastrophic redact.allow patterns', () => {
  it('refuses a pattern with nested quantifiers at configuration, naming redact.allow', async () => {
    const outcome = await outcomeOf(NESTED);
    expect(outcome).toEqual({ code: 'FERRY_CONFIG_INVALID', option: 'redact.allow' });
  }, 60_000);

  it('redacts in bounded time with an exponential pattern the configuration check lets through', async () => {
    const outcome = await outcomeOf(EXPONENTIAL);
    expect(outcome).toEqual({ redacted: `${'a'.repeat(60)}! password is [redacted]` });
  }, 60_000);

  it('still keeps what a well-behaved pattern matches', async () => {
    const outcome = await outcomeOf(WELL_BEHAVED);
    expect(outcome).toEqual({ redacted: 'order 9000000000001 failed, card [redacted-card]' });
  }, 60_000);
});

describe('the built-in rules on a long run of word characters', () => {
  // A scheme or an e-mail's local part was tried from every position of a run, to the run's end:
  // quadratic, about a second for 16,000 characters (what the relay reads of a 4,000-character
  // error) and far longer for a text given to createRedactor() directly.
  it('redact 200,000 characters of one word, and the secrets after it, in bounded time', async () => {
    const word = WORD.repeated!;
    const outcome = await outcomeOf(WORD);
    expect(outcome).toEqual({
      redacted: `${word.unit.repeat(word.times)} amqp://[redacted]@broker [redacted-email]`,
    });
  }, 60_000);

  // A number run was tried from every digit after a space, to the run's end; a sensitive key's
  // name was followed to the end of its word from every place the key appeared in it.
  it('redact 200,000 characters of single digits and spaces in bounded time', async () => {
    const digits = DIGITS.repeated!;
    const outcome = await outcomeOf(DIGITS);
    expect(outcome).toEqual({ redacted: `${digits.unit.repeat(digits.times)}x call [redacted-phone]` });
  }, 60_000);

  // A number run was tried again from every digit after a '(' or a ')' (`(1(1(1…`, `1-1)1-1)…`,
  // ` (1 (1…`), to the run's end: quadratic, 0.7 s for 16,000 characters, over 20 s for 200,000.
  it.each(PARENS)(
    'redact 200,000 characters of %j repeated in bounded time',
    async (unit, times) => {
      const outcome = await outcomeOf(parens.of(unit, times));
      expect(outcome).toMatchObject({ redacted: expect.stringMatching(/x call \[redacted-phone\]$/) });
    },
    60_000,
  );

  // The shapes added for quoted and escaped values, Authorization schemes, URL passwords with
  // '/', and PEM keys: each repeated so that a rule tried from every repetition to the end would
  // read the rest of the text again.
  it.each(LONG_TEXTS)(
    'redact a long text of %j repeated in bounded time',
    async (unit, times) => {
      // On a line of its own; a quoted value that never closes is redacted to the end of the text.
      const outcome = await outcomeOf(longTexts.of(unit, times));
      expect(outcome).toMatchObject({
        redacted: expect.stringMatching(/(\[redacted-phone\]|\[redacted-private-key\]|\[redacted\])$/),
      });
    },
    60_000,
  );

  it('redact 200,000 characters of a key name repeated in one word in bounded time', async () => {
    const keys = KEYS.repeated!;
    const outcome = await outcomeOf(KEYS);
    expect(outcome).toEqual({ redacted: `${keys.unit.repeat(keys.times)} password is [redacted]` });
  }, 60_000);
});
