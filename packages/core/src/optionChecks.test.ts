import { FerryConfigError, FerryValidationError } from './errors';
import {
  booleanArgument,
  integerArgument,
  knownKeysArgument,
  knownKeysOption,
  received,
  requiredArgument,
  uuidListArgument,
} from './optionChecks';

function refusal(prefix: string, value: unknown, keys: readonly string[]): FerryConfigError {
  try {
    knownKeysOption(prefix, value, keys);
  } catch (error) {
    if (error instanceof FerryConfigError) return error;
    throw error;
  }
  throw new Error('the options were accepted');
}

describe('knownKeysOption', () => {
  it('refuses an option name the transports retired with the name that replaced it', () => {
    const kafka = ['topic', 'maxBatchSize', 'reconnectBackoff', 'deadLetter', 'observer'];
    expect(refusal('', { maxAcceptBatch: 5 }, kafka).message).toMatch(
      /^invalid option maxAcceptBatch: .*renamed to maxBatchSize/,
    );
    expect(refusal('', { restartBackoff: {} }, kafka).message).toMatch(/renamed to reconnectBackoff/);
    expect(refusal('', { deadLetterTopic: 'dead' }, kafka).message).toMatch(/renamed to deadLetter\.topic/);
    expect(refusal('', { onEvent: () => undefined }, kafka).message).toMatch(/renamed to observer/);
    const publisher = ['defaultDestination', 'confirmTimeoutMs'];
    expect(refusal('', { sendTimeoutMs: 5 }, publisher).message).toMatch(/renamed to confirmTimeoutMs/);
    expect(refusal('', { defaultExchange: 'x' }, publisher).message).toMatch(/renamed to defaultDestination/);
    expect(refusal('', { batchSize: 5 }, ['maxBatchSize']).option).toBe('batchSize');
    expect(refusal('', { batchSize: 5 }, ['maxBatchSize']).message).toMatch(/renamed to maxBatchSize/);
  });

  it('passes an unknown key set to undefined (a configuration loader leaves optional fields so)', () => {
    expect(() => knownKeysOption('', { url: 'x', extra: undefined }, ['url'])).not.toThrow();
    expect(() => knownKeysOption('', { url: 'x', extra: null }, ['url'])).toThrow(/extra/);
  });

  it('names no replacement the options at hand do not have, and keeps listing the known keys', () => {
    const relay = ['pollInterval', 'batchSize'];
    const unknown = refusal('', { maxAcceptBatch: 5 }, ['pollInterval']);
    expect(unknown.message).toBe(
      'invalid option maxAcceptBatch: is not a known option (known: pollInterval)',
    );
    expect(() => knownKeysOption('', { batchSize: 5 }, relay)).not.toThrow();
    expect(refusal('retry.', { typo: 1 }, ['maxAttempts']).message).toBe(
      'invalid option retry.typo: is not a known option (known: maxAttempts)',
    );
  });
});

describe("knownKeysArgument (an admin call's arguments)", () => {
  const audit = { actor: true, reason: true, dryRun: true } as const;
  function argumentRefusal(value: unknown): FerryValidationError {
    try {
      knownKeysArgument('retry', value, audit);
    } catch (error) {
      if (error instanceof FerryValidationError) return error;
      throw error;
    }
    throw new Error('the arguments were accepted');
  }

  it('refuses an unknown key as invalid input naming it, with the known key it resembles', () => {
    const refused = argumentRefusal({ dry_run: true });
    expect(refused).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'dry_run' });
    expect(refused.message).toBe(
      'invalid dry_run: is not an argument of retry (known: actor, reason, dryRun): did you mean dryRun?',
    );
    expect(argumentRefusal({ dryrun: true }).message).toMatch(/did you mean dryRun\?$/);
    expect(argumentRefusal({ force: true }).message).toBe(
      'invalid force: is not an argument of retry (known: actor, reason, dryRun)',
    );
  });

  it('passes the documented keys and a left-out argument; refuses a non-object', () => {
    expect(() => knownKeysArgument('retry', { actor: 'ops', reason: undefined }, audit)).not.toThrow();
    expect(() => knownKeysArgument('retry', undefined, audit)).not.toThrow();
    expect(argumentRefusal('dryRun').message).toBe(
      'invalid retry: its arguments must be an object, got "dryRun" (string)',
    );
    expect(() => booleanArgument('force', 'true')).toThrow(
      'invalid force: must be a boolean, got "true" (string)',
    );
    expect(booleanArgument('force', undefined)).toBeUndefined();
  });
});

describe('how a refused value is quoted', () => {
  // createRelay({ db: process.env.DATABASE_URL }): the refusal is logged at start-up.
  it('a connection object, a credentials object or a key=value connection string is quoted without its secrets', () => {
    for (const value of [
      { hostname: 'mq', username: 'app', password: 's3cret' },
      {
        client: {
          region: 'eu-west-1',
          credentials: { accessKeyId: 'AKIAS3CRET', secretAccessKey: 's3cret' },
        },
      },
      { host: 'db', user: 'app', password: 's3cret' },
      'host=mq user=app password=s3cret',
      'token: s3cret',
    ]) {
      const quoted = received(value);
      expect(quoted).not.toMatch(/s3cret|AKIAS3CRET/i);
    }
    expect(received({ hostname: 'mq', password: 's3cret' })).toBe(
      '{"hostname":"mq","password":"[redacted]"} (object)',
    );
  });

  it('a connection string is quoted without its credentials, even one clipped before its host', () => {
    expect(received('postgresql://app:s3cret@db.internal:5432/orders')).toBe(
      '"postgresql://[redacted]@db.internal:5432/orders" (string)',
    );
    expect(received({ url: `amqp://app:s3cret@${'h'.repeat(80)}` })).not.toContain('s3cret');
  });
});

describe('the value checks of an admin call (the ...Argument helpers)', () => {
  const refused = (check: () => unknown): FerryValidationError => {
    try {
      check();
    } catch (error) {
      if (error instanceof FerryValidationError) return error;
      throw error;
    }
    throw new Error('the argument was accepted');
  };

  it('requiredArgument refuses a left-out arguments object naming the method; an object passes', () => {
    expect(refused(() => requiredArgument('purgeSent', undefined, { before: true }))).toMatchObject({
      field: 'purgeSent',
      message: 'invalid purgeSent: its arguments must be an object, got undefined',
    });
    const args = { before: new Date(0) };
    expect(requiredArgument('purgeSent', args, { before: true })).toBe(args);
  });

  it('integerArgument takes its fallback only for undefined, never coerces', () => {
    expect(integerArgument('limit', undefined, 1, 10, 5)).toBe(5);
    expect(refused(() => integerArgument('limit', null, 1, 10, 5)).message).toMatch(/got null$/);
    expect(refused(() => integerArgument('limit', '5', 1, 10, 5)).message).toMatch(/got "5" \(string\)$/);
  });

  it('uuidListArgument names the element it refuses by index', () => {
    const id = '0b1e8e1c-6f0e-4c1a-9a57-000000000001';
    expect(uuidListArgument('ids', [id], 3)).toEqual([id]);
    expect(refused(() => uuidListArgument('ids', [id, 'x'], 3))).toMatchObject({ field: 'ids[1]' });
    expect(refused(() => uuidListArgument('ids', [id, id, id, id], 3)).field).toBe('ids');
  });

  it('uuidListArgument reads the length once and refuses one that throws or is no array length (review 87)', () => {
    const id = '0b1e8e1c-6f0e-4c1a-9a57-000000000001';
    let reads = 0;
    const claiming = (length: unknown): unknown =>
      new Proxy([id], {
        get(target, key, receiver) {
          if (key === 'length') {
            if (length instanceof Error) throw length;
            return length;
          }
          if (key === '0' || key === '1') reads += 1;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
    for (const length of [new Error('length trap'), 1.5, -1, '1', 2 ** 53])
      expect(refused(() => uuidListArgument('ids', claiming(length), 3)).field).toBe('ids');
    expect(reads).toBe(0);
  });

  it('received shows a Date as its ISO text, an invalid one as Invalid Date', () => {
    expect(received(new Date(0))).toBe('1970-01-01T00:00:00.000Z (Date)');
    expect(received(new Date('yesterday'))).toBe('Invalid Date');
  });
});
