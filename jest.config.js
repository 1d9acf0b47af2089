// One jest project per workspace, so `npm test -w <path>` runs just that workspace
// (`--selectProjects`) and the root `npm test` runs them all. Sources are compiled by
// ts-jest in transpile-only mode; type checking is `tsc -b` in `npm run check`.
// Workspaces resolve each other to their TypeScript sources, so tests need no build.
const path = require('node:path');

const workspaces = {
  '@ferry/core': 'packages/core',
  '@ferry/testing': 'packages/testing',
  '@ferry/cli': 'packages/cli',
  '@ferry/nestjs': 'packages/nestjs',
  '@ferry/rabbitmq': 'transports/rabbitmq',
  '@ferry/kafka': 'transports/kafka',
  '@ferry/sqs': 'transports/sqs',
  '@ferry/fault-tests': 'fault-tests',
  '@ferry/bench': 'bench',
  '@ferry/scripts': 'scripts',
  '@ferry/examples': 'examples',
  // Not a workspace: tests of the published tarballs and their READMEs.
  '@ferry/packaging': 'packaging',
};

// The generated Prisma client imports its siblings as `./x.js`; jest resolves them to the .ts files.
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
for (const [name, dir] of Object.entries(workspaces)) {
  moduleNameMapper[`^${name}$`] = path.join(__dirname, dir, 'src/index.ts');
  moduleNameMapper[`^${name}/(.+)$`] = path.join(__dirname, dir, 'src/$1');
}

// @platformatic/kafka (with its helpers) ships as ES modules only; it is transpiled like our
// sources, by test-support/esmTransform.js.
const esmOnly = ['@platformatic'];
const tsJest = ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.jest.json') }];
const esmTransform = [path.join(__dirname, 'test-support/esmTransform.js'), tsJest[1]];

function project(displayName, dir) {
  return {
    displayName,
    rootDir: path.join(__dirname, dir),
    // jest's node environment, measuring each file's CPU time for the summary reporter.
    testEnvironment: path.join(__dirname, 'test-support/cpuEnvironment.js'),
    testMatch: ['**/*.test.ts', '**/*.test.js'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    moduleNameMapper,
    transform: {
      [`/node_modules/(${esmOnly.join('|')})/.+\\.js$`]: esmTransform,
      '^.+\\.[tj]s$': tsJest,
    },
    transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
    setupFiles: [path.join(__dirname, 'test-support/env.js')],
  };
}

module.exports = {
  projects: Object.entries(workspaces).map(([name, dir]) => project(name, dir)),
  testTimeout: 60_000,
  // Four test files at a time (jest's default on 2 cores is one): most of a file's time is spent
  // waiting on PostgreSQL and the brokers (a whole two-worker run, sampled with top, kept the two
  // cores about 60% busy), and each file has its own database, queues, topics and private broker
  // nodes. Whole runs on the same machine: 1,590 s with one worker (when the suite was smaller),
  // about 1,400-1,500 s with two, about 1,100 s with three; with the suite grown to 750 files,
  // three took 1,491 s on a quiet machine (npm test) and 1,849 s beside other jobs (CI's
  // .ci/run), four 1,675 s beside lighter ones and 982 s on a quiet machine, every test passing
  // (2026-12-06). With 876 files the whole of CI's `npm test` took 1,834 s on a quiet machine
  // (2026-12-06 evening): the files' times sum to 6,890 s and the two cores stay saturated (load
  // 5-7, no idle time), so more workers would not shorten it; less work per file will.
  // 2026-12-07: with 935 files, four took 1,730 s in a fresh-clone CI run (npm test 1,831 s), five
  // 1,706 s (1,803 s) in the next, with the two cores busy (vmstat: 0-2% idle, 25-30% system
  // time) and three more timing-sensitive tests failing: no gain worth the load.
  // Later on 2026-12-07, on a fresh machine: 2,261 s (jest 2,134 s; the files' CPU 2,063 s), then
  // 1,488 s (jest 1,396 s; 1,354 s) once the JVMs ran C1 only, children's TypeScript was cached and
  // rabbitmqctl calls were cut: per-file cost, not the worker count, sets the run's time here.
  // Later sessions: stop 52's CI took 1,870 s (too near 30 minutes); then npm test 1,494 s (jest
  // 1,398 s; the files' CPU 1,308 s, PostgreSQL's backends 638 s) once RabbitMQ tests asked the
  // node through erl_call instead of rabbitmqctl and the costliest files were trimmed (2026-12-07).
  // Stop 53's CI took 1,747 s. With 954 files (afterClose watches on every transport added), a
  // fresh-clone rehearsal took 1,622 s (jest 1,533 s; the files' CPU 1,603 s, half of it in the 106
  // files of 3 s or more, the other 848 files ~0.9 s each) at load 3.6-5 (2026-12-07, evening).
  // Stop 54's CI took 1,601 s. With 964 files (a slow-database fault scenario added), fresh-clone
  // rehearsals took npm test 1,555 s, then 1,481 s (jest 1,393 s; 2026-12-07, late evening).
  // With 985 files, a quiet fresh-clone rehearsal took 1,900 s (the files' CPU 1,835 s), one beside
  // a helper's tests 2,110 s; the files added cost ~80 s of wall time in all, while unchanged ones
  // cost more than the day before (packaging/quickstart 107 s of CPU against 76): a slower machine,
  // and a run too near 30 minutes: per-file cost is next to cut (2026-12-07, night).
  // FERRY_TEST_WORKERS=1 runs them one at a time.
  maxWorkers: Number(process.env.FERRY_TEST_WORKERS ?? 4),
  // A test that fails half-way can leave a poll loop of its own running (the suites close what
  // they open in afterEach / afterAll where they can); the run must still end and report.
  forceExit: true,
  // One migrated template database per run, which every test database is copied from.
  globalSetup: path.join(__dirname, 'test-support/globalSetup.js'),
  globalTeardown: path.join(__dirname, 'test-support/globalTeardown.js'),
  reporters: ['default', path.join(__dirname, 'test-support/summary-reporter.js')],
};
