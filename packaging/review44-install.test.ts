/**
 * Review 44 (ferry as a user installs it from the tarballs), failing tests.
 *
 * 1. The quick start's tsconfig with the TypeScript npm installs today. What I did: followed the
 *    core README (`npm install --save-dev prisma typescript @types/node`, its `tsconfig.json`,
 *    `npx tsc`) in a fresh directory: `typescript` resolved to 7.0.2 (6.0.3 behaves the same). What
 *    happened: `tsc` stops before compiling anything, `tsconfig.json: error TS5108: Option
 *    'moduleResolution=node10' has been removed` (TypeScript 6: TS5107, deprecated, an error
 *    unless `ignoreDeprecations`). packaging/quickstart.test.ts does not see it: it installs the
 *    repository's locked TypeScript 5.9. The nestjs, kafka, rabbitmq and sqs READMEs point at this
 *    tsconfig too. What should happen: the README's tsconfig compiles the application with the
 *    TypeScript its install line installs. Fix direction: drop `moduleResolution` (TypeScript picks
 *    the one of `module`: node10 on 5.x, bundler on 7) or use `"module": "node16"`; or pin
 *    `typescript@5` in the install line.
 *
 * 2. @ferry/kafka without its optional peer @platformatic/kafka. What I did: installed @ferry/core
 *    and @ferry/kafka from the tarballs (no @platformatic/kafka), made a `KafkaConnection({ client:
 *    'platformatic' })` and called `ensureTopics` on it, as the core quick start's service does
 *    first. What happened: it rejects with a retriable `FERRY_TRANSPORT_ERROR` ("creating Kafka
 *    topics failed: invalid option client: ..."): the missing package is wrapped as a broker
 *    failure, so a start-up loop that retries retriable errors retries a missing dependency for
 *    ever (`deleteTopics` the same). The publisher and the consumer throw the FerryConfigError
 *    itself. What should happen (kafka README: "without it, a connection with client:
 *    'platformatic' throws a FerryConfigError naming the package"): `FERRY_CONFIG_INVALID`, option
 *    `client`, not retriable, from every entry. Fix direction: `withAdmin` (src/topology.ts) makes
 *    the admin client outside the try that wraps broker failures, or passes a FerryConfigError on
 *    unwrapped (as `deleteGroups` already does).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { quickstartFiles } from './snippets';
import { installOffline, NPM_INSTALL_PREFER_OFFLINE, packedWorkDir, writeApplication } from './tempApp';

jest.setTimeout(120_000);

/** What `npm install typescript` installs today (dist-tag latest of the registry). */
const TYPESCRIPT_LATEST = '7.0.2';

describe('review44: an application installed from the tarballs, without optional peers', () => {
  const work = packedWorkDir('ferry-review44-');
  const workDir = work.dir;
  const appDir = path.join(workDir, 'app');

  beforeAll(() => {
    mkdirSync(appDir);
    writeApplication(appDir, work.tarballs(), {
      dependencies: ['@ferry/core', '@ferry/kafka'],
      devDependencies: [],
    });
    installOffline(appDir);
  }, 600_000);

  it("compiles with the README's tsconfig.json and the TypeScript `npm install typescript` installs", () => {
    const tsDir = path.join(workDir, 'typescript');
    mkdirSync(tsDir);
    writeFileSync(path.join(tsDir, 'package.json'), JSON.stringify({ name: 'ts', private: true }));
    execFileSync('npm', [...NPM_INSTALL_PREFER_OFFLINE, `typescript@${TYPESCRIPT_LATEST}`], {
      cwd: tsDir,
      stdio: 'pipe',
      timeout: 300_000,
    });
    const [tsconfig] = quickstartFiles(['packages/core/README.md']).filter((s) => s.file === 'tsconfig.json');
    expect(tsconfig).toBeDefined();
    writeFileSync(path.join(appDir, 'tsconfig.json'), tsconfig!.text);
    mkdirSync(path.join(appDir, 'src'));
    writeFileSync(
      path.join(appDir, 'src', 'app.ts'),
      [
        "import { emit, FERRY_HEADERS } from '@ferry/core';",
        "import { KafkaConnection } from '@ferry/kafka';",
        'export const connection = new KafkaConnection({ brokers: [FERRY_HEADERS.messageId] });',
        'export const emitter = emit;',
        '',
      ].join('\n'),
    );
    const tsc = path.join(tsDir, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', appDir, '--noEmit'], {
        cwd: appDir,
        encoding: 'utf8',
        timeout: 120_000,
      });
    } catch (error) {
      output = (error as { stdout?: string }).stdout ?? String(error);
    }
    expect(output).toBe('');
  });

  it('ensureTopics on a platformatic connection without @platformatic/kafka is the FerryConfigError naming it', () => {
    expect(existsSync(path.join(appDir, 'node_modules', '@platformatic', 'kafka'))).toBe(false);
    const script = `
      const { KafkaConnection, ensureTopics, deleteTopics } = require('@ferry/kafka');
      const answer = (e) => ({ code: e.code, option: e.option, retriable: e.retriable });
      (async () => {
        const connection = new KafkaConnection({ brokers: ['127.0.0.1:1'], client: 'platformatic' });
        const out = {};
        out.ensureTopics = await ensureTopics(connection, [{ topic: 't' }]).then(() => 'resolved', answer);
        out.deleteTopics = await deleteTopics(connection, ['t']).then(() => 'resolved', answer);
        process.stdout.write(JSON.stringify(out));
      })();
    `;
    const out = execFileSync(process.execPath, ['-e', script], {
      cwd: appDir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    const missingPeer = { code: 'FERRY_CONFIG_INVALID', option: 'client', retriable: false };
    expect(JSON.parse(out)).toEqual({ ensureTopics: missingPeer, deleteTopics: missingPeer });
  });
});
