/**
 * Review finding (failed first), review 95. A forRootAsync factory result holding an option that
 * only the top level takes is refused naming it as such (assertFactoryResult, REGISTRATION_KEYS),
 * but `factoryTimeoutMs` and `useFactory`, top-level keys of both modules, were missing from that
 * list: the module's settings check refused them later as "not a known option".
 * What the user sees: `useFactory: () => ({ factoryTimeoutMs: 60_000 })` is refused as unknown, as
 * if the option did not exist, instead of being told to move it beside useFactory.
 * What should happen: every top-level-only key of InboxModule and OutboxModule forRootAsync is
 * refused in a factory result as "must be a top-level ... option".
 */
import { FerryAsyncBase, REGISTRATION_KEYS } from '../src';
import { assertFactoryResult } from '../src/async-options';

/** Every key of FerryAsyncBase: the top-level options both modules share. */
const BASE_KEYS = {
  imports: true,
  inject: true,
  useFactory: true,
  isGlobal: true,
  factoryTimeoutMs: true,
} as const satisfies Record<keyof FerryAsyncBase<unknown>, true>;

describe('review95: top-level-only keys in a forRootAsync factory result', () => {
  it.each(Object.keys(BASE_KEYS))('refuses %s as a top-level option', (key) => {
    expect(REGISTRATION_KEYS).toContain(key);
    expect(() => assertFactoryResult('InboxModule', { [key]: 1 })).toThrow(
      expect.objectContaining({
        code: 'FERRY_CONFIG_INVALID',
        option: key,
        message: expect.stringContaining('must be a top-level InboxModule.forRootAsync option'),
      }),
    );
  });
});
