/**
 * Review finding (failed first): the built declarations type-check in an ES-module application
 * (`"type": "module"`, moduleResolution nodenext) as they do in a CommonJS one. @ferry/core's
 * declarations are CommonJS, so a peer's types they import resolve under `require` while the
 * application's resolve under `import`: for a package that ships both (kysely), two distinct
 * classes. The application's Kysely must still be accepted and its table types reach `tx`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './workspaces';

/** The core README's Kysely code (src/transactions.ts), plus a misuse that must stay an error. */
const KYSELY_APP = `
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import { Pool } from 'pg';
import { createInbox, emit } from '@ferry/core';
import { fromKysely, kyselyTransactions } from '@ferry/core/kysely';

interface Database {
  invoices: { order_id: string; amount_cents: number };
}

const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool() }) });

export const kyselyInbox = createInbox(kyselyTransactions(kysely), {
  global: 'shared',
  handlers: {
    'billing-kysely': async (payload, { tx }) => {
      const typed: Transaction<Database> = tx;
      await typed
        .insertInto('invoices')
        .values({ order_id: String(payload.orderId), amount_cents: 1200 })
        .execute();
      // @ts-expect-error the table types reach tx: a table the database lacks is refused
      await tx.insertInto('no_such_table').values({}).execute();
      await emit(tx, { type: 'invoice.created', payload: {} });
    },
  },
});

export const executor = fromKysely(kysely);
await kysely.transaction().execute(async (trx) => fromKysely(trx).query('SELECT 1'));
`;

function typeCheck(type: 'module' | 'commonjs'): string {
  const dir = mkdtempSync(path.join(tmpdir(), `ferry-${type}-types-`));
  try {
    mkdirSync(path.join(dir, 'src'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type }));
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['src'],
      }),
    );
    // Top-level await is ESM only; the CommonJS variant wraps it.
    const text =
      type === 'module'
        ? KYSELY_APP
        : KYSELY_APP.replace(/^await (.*)$/m, 'void (async () => { await $1 })();');
    writeFileSync(path.join(dir, 'src', type === 'module' ? 'app.ts' : 'app.ts'), text);
    try {
      return execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', dir], {
        encoding: 'utf8',
      });
    } catch (error) {
      return `tsc failed:\n${(error as { stdout?: string }).stdout ?? String(error)}`;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(() => {
  execFileSync('npx', ['tsc', '-b', 'packages/core'], { cwd: ROOT, stdio: 'pipe' });
}, 300_000);

it.each(['module', 'commonjs'] as const)(
  "the core README's Kysely code type-checks in a %s application (nodenext)",
  (type) => {
    expect(typeCheck(type)).toBe('');
  },
  120_000,
);
