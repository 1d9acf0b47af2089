/**
 * The examples' settings as a user's environment gives them: a FERRY_DATABASE_URL that does not
 * parse (a password with an unescaped `#`, a stray space) was a bare TypeError from `new URL`
 * whose `input` carried the whole URL, password and all, into the printed error; an empty
 * variable (a shell's `VAR=`) was read as that empty URL. As the demo's settings (review 109).
 */
import { FerryConfigError } from '@ferry/core';
import { exampleConfig as outboxToKafka } from '../outbox-to-kafka/src/config';
import { exampleConfig as rabbitmqConsumer } from '../rabbitmq-consumer/src/config';
import { exampleConfig as sqs } from '../sqs/src/config';

const examples = [
  ['outbox-to-kafka', outboxToKafka],
  ['rabbitmq-consumer', rabbitmqConsumer],
  ['sqs', sqs],
] as const;

describe.each(examples)('%s', (_name, config) => {
  it('refuses a FERRY_DATABASE_URL that does not parse, naming the variable and not echoing it', () => {
    const url = 'postgresql://app:s3cret#x@db host:5432/orders';
    let thrown: unknown;
    try {
      config({ FERRY_DATABASE_URL: url });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FerryConfigError);
    expect((thrown as FerryConfigError).code).toBe('FERRY_CONFIG_INVALID');
    expect((thrown as Error).message).toContain('FERRY_DATABASE_URL');
    expect(JSON.stringify(thrown, Object.getOwnPropertyNames(thrown))).not.toContain('s3cret');
  });

  it('reads empty variables as unset', () => {
    const settings = config({ FERRY_DATABASE_URL: '', FERRY_EXAMPLE_DATABASE: '' });
    expect(settings.databaseUrl).toMatch(/^postgresql:\/\/postgres@127\.0\.0\.1:5432\/ferry_ex_/);
  });

  it('puts the example database on the server URL it was given', () => {
    const settings = config({
      FERRY_DATABASE_URL: 'postgresql://app:pw@db.internal:6432/postgres?sslmode=require',
      FERRY_EXAMPLE_DATABASE: 'mine',
    });
    expect(settings.databaseUrl).toBe('postgresql://app:pw@db.internal:6432/mine?sslmode=require');
  });
});
