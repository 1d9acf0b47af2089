import { spawn } from 'node:child_process';
import path from 'node:path';
import { dropDatabase } from '@ferry/testing';
import { lockTableOnceCreated } from '../../test/lockTable';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { REGISTER_TS } from '../../../test-support/registerTs';
import { amqpUrl, queueExists } from '../../test/queueExists';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_ex_rabbit_r110');
// Dropped before each run too: the lock below must be taken on the run's fresh database.
beforeEach(() => dropDatabase(databaseUrl));
afterAll(() => dropDatabase(databaseUrl));

describe('review 110: the rabbitmq-consumer example interrupted while it runs', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    "%s: closes the app, removes the run's queue and exits with 128 + the signal",
    async (signal) => {
      const examples = path.resolve(__dirname, '../..');
      const child = spawn(
        process.execPath,
        ['-r', REGISTER_TS, path.join(examples, 'rabbitmq-consumer/src/main.ts')],
        {
          env: {
            ...process.env,
            FERRY_DATABASE_URL: serverUrl(),
            FERRY_EXAMPLE_DATABASE: new URL(databaseUrl).pathname.slice(1),
            FERRY_AMQP_URL: amqpUrl,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('exit', (code, killedBy) => resolve({ code, signal: killedBy })),
      );
      const lock = await lockTableOnceCreated(databaseUrl, 'rabbitmq_consumer_orders', Date.now() + 120_000);
      try {
        const queue = await new Promise<string>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            const published = /published \d+ deliveries to (\S+)/.exec(output);
            if (published) resolve(published[1] as string);
          });
          void exited.then(() => reject(new Error(`the example exited before it ran:\n${output}`)));
        });
        expect(await queueExists(queue)).toBe(true);
        child.kill(signal);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await lock.query('ROLLBACK'); // the handlers waiting on it finish, so the app can close
        const deadline = setTimeout(() => child.kill('SIGKILL'), 120_000);
        const exit = await exited;
        clearTimeout(deadline);
        expect({ ...exit, interrupted: output.includes(`interrupted (${signal})`) }).toEqual({
          code: signal === 'SIGINT' ? 130 : 143,
          signal: null,
          interrupted: true,
        });
        expect(await queueExists(queue)).toBe(false);
        expect(await queueExists(`${queue}.dlq`)).toBe(false);
      } finally {
        await lock.end().catch(() => undefined);
        child.kill('SIGKILL');
      }
    },
    240_000,
  );
});
