/**
 * Review finding (failed first): serveMetrics took any `path` starting with '/', and its `url`
 * named that path; a request is matched on its pathname as sent (percent-encoded), so a path
 * holding a query, a fragment or a character a URL encodes was served by no request, its own
 * `url` included: every scrape was 404 and nothing said so at start. Such a path is refused
 * now; every path it takes is served at its `url`.
 */
import { request } from 'node:http';
import { createFerryMetrics, serveMetrics, type MetricsServer } from '@ferry/core/metrics';
const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}

describe('serveMetrics path', () => {
  it.each([
    ['/metrics?token=1'],
    ['/metrics#x'],
    ['/ferry metrics'],
    ['/métriques'],
    ['/a/../metrics'],
    ['/./metrics'],
    ['//metrics'],
    ['/metrics\\x'],
    ['/metrics\tx'],
    ['/metrics%zz'],
  ])('a server started with path %j answers its own url (or the path is refused at start)', async (path) => {
    const started = await serveMetrics({ registry: createFerryMetrics().registry, port: 0, path }).then(
      (server) => {
        servers.push(server);
        return server;
      },
      (error: unknown) => error as Error,
    );
    if (started instanceof Error) {
      expect(started).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'path' });
      return;
    }
    expect(await status(started.url)).toBe(200);
  });

  it.each([['/metrics'], ['/'], ['/ferry/metrics'], ['/m%C3%A9triques'], ['/metrics.txt'], ['/a-b_c~d']])(
    'a plain URL path %j is taken and served at its url',
    async (path) => {
      const server = await serveMetrics({ registry: createFerryMetrics().registry, port: 0, path });
      servers.push(server);
      expect(server.url.endsWith(path)).toBe(true);
      expect(await status(server.url)).toBe(200);
    },
  );

  it('a refused path is named in the error', async () => {
    await expect(
      serveMetrics({ registry: createFerryMetrics().registry, port: 0, path: '/metrics?token=1' }),
    ).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'path' });
  });
});
