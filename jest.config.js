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
};

// The generated Prisma client imports its siblings as `./x.js`; jest resolves them to the .ts files.
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
for (const [name, dir] of Object.entries(workspaces)) {
  moduleNameMapper[`^${name}$`] = path.join(__dirname, dir, 'src/index.ts');
  moduleNameMapper[`^${name}/(.+)$`] = path.join(__dirname, dir, 'src/$1');
}

// p-limit and yocto-queue ship as ES modules only; they are transpiled like our sources.
const esmOnly = ['p-limit', 'yocto-queue'];

function project(displayName, dir) {
  return {
    displayName,
    rootDir: path.join(__dirname, dir),
    testEnvironment: 'node',
    testMatch: ['**/*.test.ts', '**/*.test.js'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    moduleNameMapper,
    transform: {
      '^.+\\.[tj]s$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.jest.json') }],
    },
    transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
    setupFiles: [path.join(__dirname, 'test-support/env.js')],
  };
}

module.exports = {
  projects: Object.entries(workspaces).map(([name, dir]) => project(name, dir)),
  testTimeout: 60_000,
  reporters: ['default', path.join(__dirname, 'test-support/summary-reporter.js')],
};
