import { readFileSync } from 'node:fs';
import path from 'node:path';
import { quickstartCommands } from './snippets';
import { PUBLISHED, ROOT, packageJson } from './workspaces';

/**
 * Each README's install lines stand on their own: a README that tells its reader to run `ferry`
 * (`ferry migrate`, `npx ferry check`, …) installs @ferry/cli in its own quick start. The
 * quick-start test installs every README's lines together, so it cannot see one README leave the
 * CLI out; `npx ferry` without it fetches whatever package the registry calls `ferry`.
 */
function installed(readme: string): string[] {
  return quickstartCommands(readme, 'commands')
    .filter(([npm, verb]) => npm === 'npm' && verb === 'install')
    .flatMap((line) => line.slice(2));
}

const runningFerry = PUBLISHED.filter(
  (dir) =>
    packageJson(dir).name !== '@ferry/cli' &&
    /\bferry (?:migrate|check|outbox|inbox|health)\b/.test(
      readFileSync(path.join(ROOT, dir, 'README.md'), 'utf8'),
    ),
).map((dir) => `${dir}/README.md`);

test('the READMEs that run ferry are found', () => {
  expect(runningFerry).toEqual(
    expect.arrayContaining(['packages/core/README.md', 'packages/nestjs/README.md']),
  );
});

test.each(runningFerry)('%s runs `ferry`: its install lines install @ferry/cli', (readme) => {
  expect(installed(readme)).toContain('@ferry/cli');
});
