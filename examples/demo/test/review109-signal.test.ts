import { spawn } from 'node:child_process';
import path from 'node:path';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { REGISTER_TS } from '../../../test-support/registerTs';
import { queueExists } from '../../test/queueExists';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_r109s');
afterAll(() => dropDatabase(databaseUrl));

describe('review 109: the demo interrupted while it runs', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s: closes what it started (its RabbitMQ queues removed) and exits with 128 + the signal',
    async (signal) => {
      const examples = path.resolve(__dirname, '../..');
      const child = spawn(process.execPath, ['-r', REGISTER_TS, path.join(examples, 'demo/src/main.ts')], {
        env: {
          ...process.env,
          FERRY_DATABASE_URL: serverUrl(),
          FERRY_DEMO_DATABASE: new URL(databaseUrl).pathname.slice(1),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const queue = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const started = /RabbitMQ queue (\S+) ->[\s\S]*metrics on/.exec(output);
          if (started) resolve(started[1] as string);
        });
        void exited.then(() => reject(new Error(`the demo exited before it ran:\n${output}`)));
      });
      // Declared by the pipeline's consumer once it started: the signal comes while it runs.
      const until = Date.now() + 120_000;
      while (!(await queueExists(queue)) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await queueExists(queue)).toBe(true);
      child.kill(signal);
      const deadline = setTimeout(() => child.kill('SIGKILL'), 120_000);
      const code = await exited;
      clearTimeout(deadline);
      expect({ code, interrupted: output.includes(`interrupted (${signal})`) }).toEqual({
        code: signal === 'SIGINT' ? 130 : 143,
        interrupted: true,
      });
      expect(await queueExists(queue)).toBe(false);
      expect(await queueExists(`${queue}.dlq`)).toBe(false);
    },
    240_000,
  );
});
