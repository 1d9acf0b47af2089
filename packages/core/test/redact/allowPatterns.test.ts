/**
 * `redact.allow` takes the application's RegExps, and JavaScript cannot interrupt a RegExp: a
 * catastrophic one (nested quantifiers, overlapping alternatives) against a long error text
 * would hold the event loop for minutes while a worker or relay redacts an error. ferry refuses
 * the nested quantifiers at configuration and bounds the time the others may take.
 *
 * Each case runs in a child process with a kill timeout, so a redaction that hangs fails its
 * test instead of freezing the run.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const CORE = path.join(__dirname, '../../src/index.ts');
const REGISTER_TS = path.join(__dirname, '../outbox/fixtures/register-ts.js');
/** The guard against a hang: far beyond what these redactions take, far below "minutes". */
const KILL_AFTER_MS = 20_000;

type Outcome =
  | { readonly redacted: string }
  | { readonly code: string; readonly option: string }
  | { readonly killed: true };

/** Builds a redactor for `pattern` in a child process and redacts `text` with it. */
function redactInChild(pattern: RegExp, text: string): Promise<Outcome> {
  const script = `
    const { createRedactor } = require(${JSON.stringify(CORE)});
    const [source, flags, text] = JSON.parse(process.argv[1]);
    let answer;
    try {
      const redact = createRedactor({ allow: [new RegExp(source, flags)] });
      answer = { redacted: redact(text) };
    } catch (error) {
      answer = { code: error.code, option: error.option };
    }
    process.stdout.write(JSON.stringify(answer));`;
  const child = spawn(
    process.execPath,
    ['-r', REGISTER_TS, '-e', script, JSON.stringify([pattern.source, pattern.flags, text])],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    child.once('exit', (_code, signal) => {
      clearTimeout(kill);
      resolve(signal === 'SIGKILL' ? { killed: true } : (JSON.parse(output) as Outcome));
    });
  });
}

describe('catastrophic redact.allow patterns', () => {
  it('refuses a pattern with nested quantifiers at configuration, naming redact.allow', async () => {
    const outcome = await redactInChild(/^(a+)+$/, `${'a'.repeat(60)}! password is hunter2`);
    expect(outcome).toEqual({ code: 'FERRY_CONFIG_INVALID', option: 'redact.allow' });
  }, 60_000);

  it('redacts in bounded time with an exponential pattern the configuration check lets through', async () => {
    // (a|a)* has no nested quantifier but backtracks 2^n ways on a run of n a's that fails.
    const outcome = await redactInChild(/^(a|a)*$/, `${'a'.repeat(60)}! password is hunter2`);
    expect(outcome).toEqual({ redacted: `${'a'.repeat(60)}! password is [redacted]` });
  }, 60_000);

  it('still keeps what a well-behaved pattern matches', async () => {
    const outcome = await redactInChild(/order 9\d{12}/, 'order 9000000000001 failed, card 4111111111111111');
    expect(outcome).toEqual({ redacted: 'order 9000000000001 failed, card [redacted-card]' });
  }, 60_000);
});
