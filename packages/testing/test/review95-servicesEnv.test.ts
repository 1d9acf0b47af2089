/**
 * Review finding (failed first), review 95. startFerryServices reads its FERRY_SERVICES_*
 * variables two ways: an empty FERRY_SERVICES_SCRIPT is unset (scripts/services is looked for
 * above the cwd), an empty FERRY_SERVICES_MODE is a value (refused as neither mode). And a script
 * path that does not exist was spawned: its ENOENT came back as a transport error naming neither
 * the variable nor the option.
 * What the user sees: `FERRY_SERVICES_MODE= npm test` (a CI template's empty variable) fails with
 * "must be one of"; a mistyped FERRY_SERVICES_SCRIPT fails as if a service were down.
 * What should happen: an empty FERRY_SERVICES_* variable is unset, as a shell's `VAR=` means; a
 * script that does not exist is FERRY_CONFIG_INVALID naming the variable or option that gave it.
 */
import { startFerryServices } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';
import { restoreEnvAfterEach } from './support/restoredEnv';

const VARIABLES = ['FERRY_SERVICES_MODE', 'FERRY_SERVICES_SCRIPT', 'DOCKER_HOST'];
const MISSING = '/nonexistent/ferry/scripts/services';

describe('review95: FERRY_SERVICES_* variables', () => {
  restoreEnvAfterEach(VARIABLES);

  it('a FERRY_SERVICES_SCRIPT that does not exist is FERRY_CONFIG_INVALID naming it', async () => {
    process.env.FERRY_SERVICES_SCRIPT = MISSING;
    await expect(startFerryServices({ services: ['postgres'], mode: 'native' })).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'FERRY_SERVICES_SCRIPT',
      message: expect.stringContaining(MISSING),
    });
  });

  it('a nativeScript that does not exist is FERRY_CONFIG_INVALID naming it', async () => {
    await expect(
      startFerryServices({ services: ['postgres'], mode: 'native', nativeScript: MISSING }),
    ).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'nativeScript' });
  });

  it('an empty FERRY_SERVICES_MODE is unset (auto), as an empty FERRY_SERVICES_SCRIPT is', async () => {
    // No Docker (a closed port): auto takes the native path, which reaches the missing script.
    process.env.DOCKER_HOST = `tcp://127.0.0.1:${await closedPort()}`;
    process.env.FERRY_SERVICES_MODE = '';
    process.env.FERRY_SERVICES_SCRIPT = MISSING;
    await expect(startFerryServices({ services: ['postgres'] })).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'FERRY_SERVICES_SCRIPT',
    });
  });
});
