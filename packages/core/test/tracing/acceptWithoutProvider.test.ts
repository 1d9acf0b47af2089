/**
 * Acceptance starts no spans while no tracer provider is registered (recordsNoSpans: every span
 * would be a non-recording one, and acceptance never reads its spans' context): 4 us an input of
 * work no one sees. What must not change with it:
 * - a provider registered after acceptances without one gets the spans of the next acceptance
 *   (the provider is looked at on every call, never remembered);
 * - span names: the first 100 consumers a process accepts for are named in their spans, later ones
 *   get `accept` alone, also when the first ones were accepted before a provider was registered.
 */
import { SpanKind } from '@opentelemetry/api';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { installTracing, type TestTracing } from '../../../../test-support/tracing';
import { makeInbox, message } from '../inbox/helpers';

jest.setTimeout(60_000);

describe('acceptance without a tracer provider', () => {
  let database: TestDatabase;
  let tracing: TestTracing | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await tracing?.shutdown();
    await database.drop();
  });

  const acceptSpans = () =>
    (tracing?.spans() ?? []).filter((span) => span.kind === SpanKind.CONSUMER).map((span) => span.name);

  it('names the first 100 consumers seen before a provider, and records once one is registered', async () => {
    // An inbox without handlers accepts for any consumer name.
    const inbox = makeInbox(database.prisma);
    const early = Array.from({ length: 100 }, (_, i) => `early-${i}`);
    await inbox.acceptMany(early.map((consumer) => message({ consumer })));

    tracing = installTracing();
    await inbox.acceptMany([message({ consumer: 'early-7' }), message({ consumer: 'late' })]);
    // Spans recorded at once; `late` is the 101st consumer, named by its operation alone.
    expect(acceptSpans().sort()).toEqual(['accept', 'accept early-7']);
    await inbox.close();
  });
});
