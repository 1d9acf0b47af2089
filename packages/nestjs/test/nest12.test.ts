/**
 * NestJS 12 compatibility: runs compat/nest12/smoke.js, which loads the built package
 * (packages/nestjs/dist) with @nestjs/common and @nestjs/core 12 (ESM-only, loaded with require())
 * from compat/nest12/node_modules, against a fresh migrated database. The rest of this suite runs
 * against NestJS 11 from the root node_modules.
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(__dirname, '../../..');
const compat = path.join(__dirname, '../compat/nest12');

interface Scenario {
  placement: 'imported' | 'global';
  outbox: { status: string; slowStatus: string; delivered: string[] };
  inbox: { status: string; slowStatus: string; effects: string[] };
  drain: { logWhileDraining: string[]; log: string[]; relayState: string; inboxState: string };
}

interface SmokeResult {
  node: string;
  requireModule: boolean;
  nest: Record<string, { name: string; version: string; dir: string }[]>;
  nest11Loaded: string[];
  scenarios: Scenario[];
}

let result: SmokeResult;

beforeAll(async () => {
  // No-ops when current: NestJS 12 from compat/nest12/package-lock.json (scripts/setup.js
  // installs it too), and the build the smoke run loads.
  execFileSync(process.execPath, [path.join(compat, 'install.js'), '--quiet'], { stdio: 'pipe' });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'packages/nestjs'], {
    cwd: root,
    stdio: 'pipe',
  });

  const run = await promisify(execFile)(process.execPath, [path.join(compat, 'smoke.js')], {
    cwd: root,
    env: { ...process.env, FERRY_LOG_LEVEL: process.env.FERRY_LOG_LEVEL ?? 'error' },
    timeout: 150_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`smoke.js failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('FERRY_NEST12_RESULT '));
  if (!line) throw new Error(`smoke.js printed no result:\n${run.stdout}\n${run.stderr}`);
  result = JSON.parse(line.slice('FERRY_NEST12_RESULT '.length)) as SmokeResult;
}, 300_000);

describe('@ferry/nestjs on NestJS 12', () => {
  it('loads @nestjs/common and @nestjs/core 12 with require() and no NestJS 11', () => {
    expect(result.requireModule).toBe(true);
    for (const name of ['@nestjs/common', '@nestjs/core']) {
      expect(result.nest[name]).toEqual([
        {
          name,
          version: expect.stringMatching(/^12\./),
          dir: `packages/nestjs/compat/nest12/node_modules/${name}`,
        },
      ]);
    }
    expect(result.nest11Loaded).toEqual([]);
  });

  it.each(['imported', 'global'])(
    'relays an emitted event, completes a decorated inbox handler and drains before Prisma disconnects (PrismaModule %s)',
    (placement) => {
      const scenario = result.scenarios.find((s) => s.placement === placement);
      expect(scenario).toBeDefined();
      expect(scenario?.outbox).toEqual({
        status: 'SENT',
        slowStatus: 'SENT',
        delivered: ['order.created', 'order.slow'],
      });
      expect(scenario?.inbox).toEqual({
        status: 'COMPLETED',
        slowStatus: 'COMPLETED',
        effects: ['orders.projection'],
      });
      // A publish and a handler were held open across app.close(): nothing disconnected
      // while they ran, and Prisma disconnected last.
      expect(scenario?.drain.logWhileDraining).toEqual([]);
      expect(scenario?.drain.log).toHaveLength(3);
      expect(scenario?.drain.log).toEqual(expect.arrayContaining(['publish:finished', 'handler:finished']));
      expect(scenario?.drain.log[2]).toBe('prisma:disconnect');
      expect(scenario?.drain).toMatchObject({ relayState: 'closed', inboxState: 'closed' });
    },
  );
});
