/**
 * Review 90 (failed first): serveMetrics when the registry it serves fails or is not what it says.
 *
 * What I did: served a registry (prom-client's global `register`, as the README suggests, holds the
 * application's own collectors too) whose `metrics()` rejected: with an Error quoting a URL with
 * its password (undici's fetch names the URL it refused that way), and with a value that cannot be
 * read as text (a null-prototype object); and served a JavaScript MetricsSource without
 * `contentType`, and one whose content type holds a line break.
 * What happened: the 500 answer quoted the password to whoever scraped the port; the unreadable
 * value made the request handler's promise reject (String() threw): an unhandled rejection, which
 * ends a Node process, and the scrape never got an answer; the missing or broken content type made
 * `writeHead` throw on every scrape, the same unhandled rejection.
 * What should happen: the 500 answer says what failed without a URL's user and password, an
 * unreadable failure is still a 500, and a source without a usable content type is refused by
 * serveMetrics (FerryConfigError on `registry`) before it listens.
 */
import { FerryConfigError } from '@ferry/core';
import { serveMetrics, type MetricsServer, type ServeMetricsOptions } from '@ferry/core/metrics';
import { get } from './metrics/httpGet';

type MetricsSource = ServeMetricsOptions['registry'];

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(registry: MetricsSource): Promise<MetricsServer> {
  const server = await serveMetrics({ registry, port: 0 });
  servers.push(server);
  return server;
}

describe('serveMetrics with a failing or odd registry', () => {
  it("answers 500 without the password of a URL the registry's error quotes", async () => {
    const server = await start({
      contentType: 'text/plain',
      metrics: () =>
        Promise.reject(
          new TypeError(
            'Request cannot be constructed from a URL that includes credentials: https://scraper:hunter2@stats.internal/',
          ),
        ),
    });
    const answer = await get(server.url);
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('hunter2');
    expect(answer.body).toContain('stats.internal');
  });

  it('answers 500 for a failure that cannot be read as text, and goes on answering', async () => {
    const server = await start({
      contentType: 'text/plain',
      metrics: () => Promise.reject(Object.create(null) as object),
    });
    expect((await get(server.url)).status).toBe(500);
    expect((await get(server.url)).status).toBe(500);
  });

  it.each([
    ['without a content type', undefined],
    ['whose content type holds a line break', 'text/plain\r\nX-Injected: 1'],
  ])('refuses a source %s before it listens', async (_what, contentType) => {
    const registry = { metrics: async () => 'up 1\n', contentType } as unknown as MetricsSource;
    const started = serveMetrics({ registry, port: 0 }).then((server) => {
      servers.push(server);
      return server;
    });
    await expect(started).rejects.toThrow(FerryConfigError);
    await expect(started).rejects.toMatchObject({ option: 'registry' });
  });
});
