/**
 * Review 67: maxTransportRetries, whose default and reject reason moved to core (review 64).
 * A huge value ("retry for ever") is accepted by the integer check, then retryTiers walks
 * every retry 1..maxTransportRetries looking for a 33rd distinct tier that a capped backoff
 * never produces: the consumer's options never resolve, the process spins synchronously.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** Runs `script` in a node process of its own, killed after `deadlineMs`; its stdout, or 'killed'. */
function runIsolated(script: string, deadlineMs: number): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { cwd: ROOT, timeout: deadlineMs }, (error, stdout) => {
      resolve(error?.killed === true ? 'killed' : stdout.trim());
    });
  });
}

describe('review 67: RabbitMQ maxTransportRetries bounds', () => {
  test('a huge maxTransportRetries is resolved or refused (FERRY_CONFIG_INVALID), never spun on for ever', async () => {
    const script = `
      const { resolveConsumerOptions } = require('@ferry/rabbitmq');
      try {
        const resolved = resolveConsumerOptions(
          { connection: 'amqp://guest:guest@127.0.0.1:5672', queue: 'q', consumer: 'c', maxTransportRetries: Number.MAX_SAFE_INTEGER },
          1000,
        );
        console.log('resolved ' + resolved.maxTransportRetries);
      } catch (error) {
        console.log('threw ' + error.code);
      }`;
    // The same with maxTransportRetries 5 answers in milliseconds; the deadline is a hang's bound.
    const answer = await runIsolated(script, 60_000);
    expect(answer).toMatch(/^(resolved 9007199254740991|threw FERRY_CONFIG_INVALID)$/);
  }, 90_000);
});
