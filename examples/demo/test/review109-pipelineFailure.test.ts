import { createFerryMetrics } from '@ferry/core/metrics';
import { dropDatabase } from '@ferry/testing';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { scratchDatabaseUrl } from '../../../test-support/database';
import { demoConfig } from '../src/config';
import { freshDatabase } from '../src/database';
import { startPipeline } from '../src/pipeline';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_r109p');
afterAll(() => dropDatabase(databaseUrl));

/** The sessions other than this one's on the test database, with what each last ran. */
async function sessions(): Promise<string[]> {
  const client = listened(new Client({ connectionString: databaseUrl }));
  await client.connect();
  try {
    const { rows } = await client.query<{ query: string }>(
      'SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return rows.map((row) => row.query);
  } finally {
    await client.end();
  }
}

async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await read();
  }
  return value;
}

describe('review 109: the demo pipeline refused by RabbitMQ after its relay and inbox started', () => {
  it('rejects with the refusal and closes what it had started (relay listener, inbox worker, Kafka publisher)', async () => {
    const amqpUrl = new URL(process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
    amqpUrl.password = 'not-the-password-r109';
    const config = { ...demoConfig(), databaseUrl, amqpUrl: amqpUrl.toString() };
    const prisma = await freshDatabase(databaseUrl);
    const id = config.runId;
    const names = {
      queue: `ferry.demo.r109.${id}`,
      topic: `ferry.demo.r109.${id}`,
      downstreamGroup: `ferry-demo-r109-${id}`,
    };
    try {
      await expect(startPipeline(config, prisma, names, createFerryMetrics())).rejects.toThrow(
        /ACCESS_REFUSED/,
      );
    } finally {
      await prisma.$disconnect();
    }
    // Prisma's pool is gone; what is left was started by the pipeline and not closed (the
    // relay's LISTEN session, or a Prisma session reopened by an inbox worker still polling).
    expect(await settle(sessions, (left) => left.length === 0)).toEqual([]);
  }, 120_000);
});
