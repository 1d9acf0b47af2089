/**
 * Review 90 (failed first): a URL's password as a metric label value.
 *
 * What I did: @ferry/core/metrics' transport observer fed by a third party's transport (the
 * TransportEvent contract is public) that names its queue by its URL, user and password included,
 * as the `destination` of its publishes and the `source` of its deliveries.
 * What happened: the label values held the password: every scrape of the endpoint served it.
 * ferry's own transports strip it before they report (stripUrlCredentials); the metrics did not.
 * What should happen: no label value holds a URL's user and password (the metrics observer is
 * the last place every transport's events pass before they are served).
 */
import { createFerryMetrics } from '@ferry/core/metrics';

const QUEUE = 'https://ferry:hunter2@queues.internal/orders';

it('no destination or source label holds the password of a URL', async () => {
  const metrics = createFerryMetrics();
  metrics.transport({ type: 'published', transport: 'custom', destination: QUEUE, count: 1, durationMs: 3 });
  metrics.transport({ type: 'received', transport: 'custom', source: QUEUE, count: 1 });
  const text = await metrics.registry.metrics();
  expect(text).toContain('queues.internal/orders');
  expect(text).not.toContain('hunter2');
});
