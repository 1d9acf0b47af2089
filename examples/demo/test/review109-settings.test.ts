/**
 * Review 109, failing test: the demo read its numeric settings with Number(), so a malformed one
 * (`FERRY_DEMO_ORDERS=abc`, a negative count, zero orders, a deadline of 0) became NaN or a
 * nonsense count and the demo failed far from the cause (a TypeError on `orders[NaN]`, or a bogus
 * mismatch in its report). Each is refused at start, naming the variable, and the demo exits 1.
 */
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { demoConfig } from '../src/config';
import { runExampleProcess } from '../../test/exampleProcess';

// A database of this test's own (were the setting taken, the demo would recreate it), so a
// concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_r109');
afterAll(() => dropDatabase(databaseUrl));

describe('review 109: the demo refuses malformed settings at start', () => {
  it.each([
    ['FERRY_DEMO_ORDERS', 'abc'],
    ['FERRY_DEMO_ORDERS', '-5'],
    ['FERRY_DEMO_ORDERS', '0'],
    ['FERRY_DEMO_ORDERS', '1.5'],
    ['FERRY_DEMO_ORDERS', '1e3'],
    ['FERRY_DEMO_DUPLICATES', '-1'],
    ['FERRY_DEMO_DUPLICATES', 'many'],
    ['FERRY_DEMO_DEADLINE_MS', '0'],
    ['FERRY_DEMO_DEADLINE_MS', '99999999999'],
    ['FERRY_DEMO_METRICS_PORT', '70000'],
    ['FERRY_DEMO_METRICS_PORT', '-1'],
    ['FERRY_DATABASE_URL', 'postgres//127.0.0.1/test'],
  ])('%s=%s', (variable, value) => {
    expect(() => demoConfig({ [variable]: value })).toThrow(variable);
  });

  it('takes well-formed values, and an empty variable as unset', () => {
    const config = demoConfig({
      FERRY_DEMO_ORDERS: '3',
      FERRY_DEMO_DUPLICATES: '0',
      FERRY_DEMO_DEADLINE_MS: '',
      FERRY_DEMO_METRICS_PORT: '0',
    });
    expect(config).toMatchObject({ orders: 3, duplicates: 0, deadlineMs: 120_000, metricsPort: 0 });
  });

  it('run as its README runs it, prints which setting is wrong and exits with 1', async () => {
    const exit = await runExampleProcess(
      'demo',
      {
        FERRY_DATABASE_URL: serverUrl(),
        FERRY_DEMO_DATABASE: new URL(databaseUrl).pathname.slice(1),
        FERRY_DEMO_ORDERS: 'abc',
      },
      180_000,
    );
    expect(exit.output).toContain('ferry demo failed');
    expect(exit.output).toContain('FERRY_DEMO_ORDERS');
    expect(exit.output).not.toContain('TypeError');
    expect(exit.code).toBe(1);
  }, 240_000);
});
