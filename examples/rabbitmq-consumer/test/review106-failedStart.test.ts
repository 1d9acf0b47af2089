import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { runExampleProcess } from '../../test/exampleProcess';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_ex_rabbit_r106');
afterAll(() => dropDatabase(databaseUrl));

describe('review 106: the rabbitmq-consumer example refused by RabbitMQ', () => {
  it('prints why it could not start (without the password) and exits with 1, closing the inbox worker', async () => {
    const amqpUrl = new URL(process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
    amqpUrl.password = 'not-the-password-r106';
    const exit = await runExampleProcess(
      'rabbitmq-consumer',
      {
        FERRY_DATABASE_URL: serverUrl(),
        FERRY_EXAMPLE_DATABASE: new URL(databaseUrl).pathname.slice(1),
        FERRY_AMQP_URL: amqpUrl.toString(),
      },
      180_000, // ferry's sources are transpiled first; on main the process never exits
    );
    expect(exit.output).toContain('ACCESS_REFUSED');
    expect(exit.output).not.toContain('not-the-password-r106');
    expect(exit.code).toBe(1);
  }, 240_000);
});
