import { dropDatabase } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { runExampleProcess } from '../../test/exampleProcess';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_ex_rabbit_r109');
afterAll(() => dropDatabase(databaseUrl));

const env = (amqpUrl: string) => ({
  FERRY_DATABASE_URL: serverUrl(),
  FERRY_EXAMPLE_DATABASE: new URL(databaseUrl).pathname.slice(1),
  FERRY_AMQP_URL: amqpUrl,
});

describe('review 109: the rabbitmq-consumer example whose start fails reports why, not what failed while closing', () => {
  it("refused by RabbitMQ: prints the consumer's FerryError, not the queue removal's refusal", async () => {
    const amqpUrl = new URL(process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
    amqpUrl.password = 'not-the-password-r109';
    const exit = await runExampleProcess('rabbitmq-consumer', env(amqpUrl.toString()), 180_000);
    expect(exit.output).toMatch(/^FerryError.*ACCESS_REFUSED/m);
    expect(exit.output).not.toContain('not-the-password-r109');
    expect(exit.code).toBe(1);
  }, 240_000);

  it("RabbitMQ not listening: prints the consumer's FerryError, not the queue removal's ECONNREFUSED", async () => {
    const exit = await runExampleProcess(
      'rabbitmq-consumer',
      env(`amqp://guest:guest@127.0.0.1:${await closedPort()}`),
      180_000,
    );
    expect(exit.output).toMatch(/^FerryError/m);
    expect(exit.code).toBe(1);
  }, 240_000);
});
