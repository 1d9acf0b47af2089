/**
 * Review 106 (ferry installed from its tarballs): the application's own SQSClient.
 *
 * What I did: in a fresh application that pins `@aws-sdk/client-sqs` (here 3.600.0, as a lockfile
 * of last year does), installed @ferry/core and @ferry/sqs from the tarballs and passed the
 * application's `new SQSClient(...)` as the connection's documented `client` option. What
 * happened: npm installed a second copy of the SDK for @ferry/sqs (it was a dependency, ^3.900.0);
 * `tsc` refused the client (two `SQSClient` types), and in JavaScript `connect()` rejected with a
 * retriable "SQS did not answer ListQueues at the given SQSClient (endpoint unreachable):
 * serializerMiddleware is not found ...": ferry's commands, of its own copy, do not run on the
 * other copy's client, and a consumer on that connection retried it for ever as an outage. What
 * should happen: one copy of the SDK, the application's, so the client it hands ferry is the one
 * ferry's commands are built for; an application whose pinned SDK is older than ferry needs is
 * told so by npm when it installs, naming the package.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sqsEndpoint } from './brokers';
import { installOffline, NPM_INSTALL_PREFER_OFFLINE, packedWorkDir, writeApplication } from './tempApp';
import { ROOT } from './workspaces';

jest.setTimeout(120_000);

/** An SDK release before the range @ferry/sqs needs (^3.900.0). */
const OLD_SDK = '3.600.0';

/** Connects a connection built on the application's own SQSClient; prints `connected` or the error. */
const PROGRAM = `
const { SQSClient } = require('@aws-sdk/client-sqs');
const { SqsConnection } = require('@ferry/sqs');
const sdk = require.resolve('@aws-sdk/client-sqs');
const ferrys = require.resolve('@aws-sdk/client-sqs', { paths: [require.resolve('@ferry/sqs')] });
console.log(sdk === ferrys ? 'one copy' : 'two copies');
const client = new SQSClient({
  endpoint: ${JSON.stringify(sqsEndpoint)},
  region: 'us-east-1',
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
});
const connection = new SqsConnection({ client });
connection.connect().then(
  () => console.log('connected'),
  (error) => console.log(String(error && error.message)),
).finally(() => connection.close().then(() => client.destroy()));
`;

function run(appDir: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(args[0] as string, args.slice(1), {
    cwd: appDir,
    encoding: 'utf8',
    timeout: 600_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('review106: an application hands @ferry/sqs its own SQSClient', () => {
  const work = packedWorkDir('ferry-review106-');

  it('with the SDK the repository locks: one copy, and the connection connects on that client', () => {
    const appDir = path.join(work.dir, 'locked');
    mkdirSync(appDir);
    writeApplication(appDir, work.tarballs(), {
      dependencies: ['@ferry/core', '@ferry/sqs', '@aws-sdk/client-sqs'],
      devDependencies: [],
    });
    installOffline(appDir);
    writeFileSync(path.join(appDir, 'connect.js'), PROGRAM);
    const { output } = run(appDir, ['node', 'connect.js']);
    expect(output).toContain('one copy');
    expect(output).toContain('connected');
  });

  it(`with an SDK pinned before ferry's range (${OLD_SDK}): npm refuses the install and names the package, no second copy`, () => {
    const appDir = path.join(work.dir, 'pinned');
    mkdirSync(appDir);
    const spec = (name: string) => `file:${work.tarballs().get(name) as string}`;
    writeFileSync(
      path.join(appDir, 'package.json'),
      JSON.stringify({
        name: 'ferry-review106-app',
        version: '1.0.0',
        private: true,
        dependencies: {
          '@aws-sdk/client-sqs': OLD_SDK,
          '@ferry/core': spec('@ferry/core'),
          '@ferry/sqs': spec('@ferry/sqs'),
        },
      }),
    );
    const install = run(appDir, ['npm', ...NPM_INSTALL_PREFER_OFFLINE]);
    if (install.status === 0) {
      // Installed: the application's client must then work with ferry (it did not: two copies).
      writeFileSync(path.join(appDir, 'connect.js'), PROGRAM);
      const { output } = run(appDir, ['node', 'connect.js']);
      expect(output).toContain('one copy');
      expect(output).toContain('connected');
      return;
    }
    expect(install.output).toMatch(/ERESOLVE/);
    expect(install.output).toMatch(/peer @aws-sdk\/client-sqs@"\^3\.900\.0" from @ferry\/sqs/);
  });

  it("the SQS README's install line installs the SDK, a peer dependency of @ferry/sqs", () => {
    const readme = readFileSync(path.join(ROOT, 'transports/sqs/README.md'), 'utf8');
    expect(readme).toMatch(/npm install [^\n]*@ferry\/sqs[^\n]*@aws-sdk\/client-sqs/);
  });
});
