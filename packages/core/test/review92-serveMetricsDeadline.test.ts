/**
 * Review 92 (failed first): serveMetrics given a registry whose `metrics()` never answers.
 *
 * User: a collector of their own (or prom-client's `collect` of a gauge reading a service that
 * went silent) never settles. Every wait has a deadline: the scrape must not hang, and each
 * request must not leave a pending answer behind for the life of the process.
 * What happened: the request waited for ever (the scraper's own timeout was the only end), and
 * `timeoutMs` was refused as an unknown option.
 * What should happen: 500 `metrics failed: no answer within N ms` at `timeoutMs`, and the server
 * goes on answering.
 */
import { serveMetrics, type MetricsServer, type ServeMetricsOptions } from '@ferry/core/metrics';
import { isFerryError } from '@ferry/core';
import { get } from './metrics/httpGet';

type MetricsSource = ServeMetricsOptions['registry'];

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('serveMetrics with a registry that never answers', () => {
  it('answers 500 at timeoutMs, naming the deadline, and goes on answering', async () => {
    let calls = 0;
    const registry: MetricsSource = {
      contentType: 'text/plain; version=0.0.4',
      metrics: () => {
        calls += 1;
        return calls === 2 ? Promise.resolve('up 1\n') : new Promise<string>(() => undefined);
      },
    };
    const server = await serveMetrics({ registry, port: 0, timeoutMs: 300 });
    servers.push(server);
    const first = await get(server.url);
    expect(first).toEqual({ status: 500, body: 'metrics failed: no answer within 300 ms\n' });
    expect(await get(server.url)).toEqual({ status: 200, body: 'up 1\n' });
  });

  it.each([0, -1, 1.5, '100', Number.POSITIVE_INFINITY])('refuses timeoutMs %p', async (timeoutMs) => {
    const registry: MetricsSource = { contentType: 'text/plain', metrics: async () => '' };
    const refused = await serveMetrics({ registry, port: 0, timeoutMs: timeoutMs as number }).then(
      (server) => {
        servers.push(server);
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(isFerryError(refused, 'FERRY_CONFIG_INVALID')).toBe(true);
    expect((refused as { option?: string }).option).toBe('timeoutMs');
  });
});
