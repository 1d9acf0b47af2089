/**
 * Review 123: `ferry migrate` / `ferry check` named the migrations recorded by a newer ferry on one
 * stderr line, every name of them: 1,000 rows in the ledger (a newer version's, or a migrations
 * table shared with another tool) made one line of some 20,000 characters, which log shippers cut
 * and terminals wrap past reading. The note names the first ten and counts the rest; --json lists
 * them all. `ferry health` says the schema is ready and counts them (core's readiness detail).
 */
import { useCliDatabase } from './cliDatabase';

const database = useCliDatabase();
const cli = database.cli;
const SHOWN = 10;

it('migrate, check and health name a bounded number of them on one short line, --json lists them all', async () => {
  const db = database.test.db;
  await db.execute(
    `INSERT INTO ferry_schema_migrations (name, checksum)
     SELECT '9999_review123_' || lpad(n::text, 4, '0'), 'x' FROM generate_series(1, 1000) AS n`,
  );
  const names = Array.from({ length: 1000 }, (_, i) => `9999_review123_${String(i + 1).padStart(4, '0')}`);
  for (const command of ['migrate', 'check']) {
    const run = await cli(command);
    expect(run.code).toBe(0);
    const [note, ...others] = run.errors.filter((line) => line.includes('9999_review123_'));
    expect(others).toEqual([]);
    expect(note).toBe(
      `ferry ${command}: 1000 recorded migration(s) this version does not ship (applied by a newer one; ` +
        `left as they are): ${names.slice(0, SHOWN).join(', ')} and 990 more (--json lists them all)`,
    );
  }
  const json = await cli('check', '--json');
  expect(JSON.parse(json.lines.join('\n'))).toEqual({ ready: true, unrecognized: names });
  const health = await cli('health');
  expect(health.lines).toContain(
    'up schema: ready; 1000 recorded migration(s) this version does not ship (applied by a newer one; `ferry check` names them)',
  );
});
