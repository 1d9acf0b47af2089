import { spawn } from 'node:child_process';
import path from 'node:path';
import { dropDatabase } from '@ferry/testing';
import { lockTableOnceCreated } from '../../test/lockTable';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { REGISTER_TS } from '../../../test-support/registerTs';
import { kafkaLeftovers, untilRunTopic } from '../../test/kafkaLeftovers';

/**
 * Review 110, failing on main: the outbox-to-kafka example interrupted by SIGINT / SIGTERM died
 * at once (Nest's shutdown hooks close the app, then re-raise the signal), so its `finally` never
 * deleted the run's topic and reader group: each interrupted run left them on Kafka. What should
 * happen (as the demo and rabbitmq-consumer do): the app closes, the run's topic and group are
 * deleted, and the process exits with 128 + the signal.
 */
const databaseUrl = scratchDatabaseUrl('ferry_ex_kafka_r110');
const brokers = (process.env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
beforeEach(() => dropDatabase(databaseUrl));
afterAll(() => dropDatabase(databaseUrl));

describe('review 110: the outbox-to-kafka example interrupted while it runs', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    "%s: closes the app, deletes the run's topic and group and exits with 128 + the signal",
    async (signal) => {
      const runId = `r110${signal.toLowerCase()}${Date.now().toString(36)}`;
      const examples = path.resolve(__dirname, '../..');
      const child = spawn(
        process.execPath,
        ['-r', REGISTER_TS, path.join(examples, 'outbox-to-kafka/src/main.ts')],
        {
          env: {
            ...process.env,
            FERRY_DATABASE_URL: serverUrl(),
            FERRY_EXAMPLE_DATABASE: new URL(databaseUrl).pathname.slice(1),
            FERRY_KAFKA_BROKERS: brokers.join(','),
            FERRY_EXAMPLE_RUN_ID: runId,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('exit', (code, killedBy) => resolve({ code, signal: killedBy })),
      );
      const lock = await lockTableOnceCreated(databaseUrl, 'outbox_to_kafka_orders', Date.now() + 120_000);
      try {
        // The topic exists once the app started; placing orders now waits on the lock.
        await untilRunTopic(brokers, runId, Date.now() + 60_000);
        expect((await kafkaLeftovers(brokers, runId)).length).toBeGreaterThan(0);
        await new Promise((resolve) => setTimeout(resolve, 500));
        child.kill(signal);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await lock.query('ROLLBACK');
        const deadline = setTimeout(() => child.kill('SIGKILL'), 120_000);
        const exit = await exited;
        clearTimeout(deadline);
        expect({ ...exit, interrupted: output.includes(`interrupted (${signal})`) }).toEqual({
          code: signal === 'SIGINT' ? 130 : 143,
          signal: null,
          interrupted: true,
        });
        expect(await kafkaLeftovers(brokers, runId)).toEqual([]);
      } finally {
        await lock.end().catch(() => undefined);
        child.kill('SIGKILL');
      }
    },
    180_000,
  );
});
