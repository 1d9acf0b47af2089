/**
 * Review 91 (failed first): serveMetrics given a registry whose answer is no text.
 *
 * User: a metrics source of their own (JavaScript, or typed loosely) whose `metrics()` resolves to
 * something other than a string: undefined from an aggregator that found no worker, a Buffer-less
 * object from a wrapper. Review 90 made serveMetrics answer 500 for "a failure that cannot be read
 * as text", and its request handler carries the note "answer() never rejects".
 * What happened: answer() threw at Buffer.byteLength (a TypeError), so the request handler's
 * safety net destroyed the socket: the scraper got a reset connection ("socket hang up"), no
 * status, nothing saying what failed.
 * What should happen: 500, `metrics failed: ...` naming what the registry answered, as for a
 * registry that rejected; and the server goes on answering.
 */
import { serveMetrics, type MetricsServer, type ServeMetricsOptions } from '@ferry/core/metrics';
import { get } from './metrics/httpGet';

type MetricsSource = ServeMetricsOptions['registry'];

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('serveMetrics with a registry whose answer is no text', () => {
  it.each([
    ['undefined', undefined],
    ['an object', { lines: ['up 1'] }],
    ['a number', 1],
  ])('answers 500 naming it when metrics() resolves to %s, and goes on answering', async (_what, body) => {
    const registry = { contentType: 'text/plain', metrics: async () => body } as unknown as MetricsSource;
    const server = await serveMetrics({ registry, port: 0 });
    servers.push(server);
    for (let i = 0; i < 2; i += 1) {
      const answer = await get(server.url);
      expect(answer.status).toBe(500);
      expect(answer.body).toMatch(/^metrics failed: .*(not text|string)/);
    }
  });
});
