/**
 * Review finding (7a23fe1, failed first): emit() accepts a float of 1e21 or more (String(1e21) is "1e+21", not
 * an integer token, so numberFault lets it through, rightly: JSON.parse gives the same double
 * back). jsonb keeps it as numeric and PostgreSQL writes numeric without an exponent, so the
 * claim's `payload::text` holds `1000000000000000000000`: inexactNumberFault reads a run of 22
 * digits as an "integer beyond 2^53-1" and noteInexactPayload FAILS the row permanently
 * ('not a valid outbox event'), although JSON.parse of that text gives exactly the value emitted.
 * A legitimate event emit() wrote (a physical quantity, 6.02214076e23, a large amount in a
 * minor unit) is never published and nobody retries it: silent data loss for the consumer.
 */
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { inexactStoredNumberFault } from '../../src/validate/jsonNumbers';
import { numberFault } from '../../src/validate/numbers';
import { emitAndRelay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

test('an event emit() accepted with a float of 1e21 or more is published, not FAILED as an inexact integer', async () => {
  const payload = { avogadro: 6.02214076e23, big: 1e21, huge: 1.5e300 };
  const { row, delivered } = await emitAndRelay(t.db, { type: 'big-float', payload });

  expect([row?.status, row?.last_error]).toEqual(['SENT', null]);
  expect(delivered.map((m) => m.payload)).toEqual([payload]);
});

test('every number emit() accepts reads back from jsonb text as no fault', async () => {
  const doubles = fc.sample(
    fc
      .oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.constantFrom(1e21, -1e21, 5e-324),
      )
      .filter((n) => numberFault(n, String(n)) === null),
    2_000,
  );
  const rows = await t.db.query<{ text: string }>(
    `SELECT jsonb_build_object('n', x::jsonb)::text AS text FROM unnest($1::text[]) WITH ORDINALITY u(x, i) ORDER BY i`,
    [doubles.map((n) => JSON.stringify(n))],
  );
  const faults = rows.map((row) => inexactStoredNumberFault(row.text)).filter((fault) => fault !== null);
  expect(faults).toEqual([]);
  expect(rows.map((row) => (JSON.parse(row.text) as { n: number }).n)).toEqual(doubles);
});
