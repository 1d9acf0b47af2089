import { request } from 'node:http';
import { createFerryMetrics, serveMetrics, type MetricsServer } from '@ferry/core/metrics';
import { scrape } from '../../../../test-support/prometheusText';

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(registry = createFerryMetrics().registry, path?: string): Promise<MetricsServer> {
  const server = await serveMetrics({ registry, port: 0, ...(path ? { path } : {}) });
  servers.push(server);
  return server;
}

function call(
  url: string,
  method: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}

describe('serveMetrics', () => {
  it("answers GET /metrics with the registry's text in its content type", async () => {
    const metrics = createFerryMetrics();
    metrics.inbox({ type: 'accepted', receiptId: 'r', consumer: 'orders' });
    const server = await start(metrics.registry);
    const s = await scrape(server.url);
    expect(s.value('ferry_inbox_acceptances_total', { consumer: 'orders', outcome: 'accepted' })).toBe(1);
    expect(s.types.get('ferry_inbox_handler_duration_seconds')).toBe('histogram');
    expect(s.help.get('ferry_inbox_acceptances_total')).toMatch(/^Deliveries offered to the inbox/);
    const head = await call(server.url, 'HEAD');
    expect([head.status, head.body, head.headers['content-type']]).toEqual([
      200,
      '',
      metrics.registry.contentType,
    ]);
  });

  it('answers 404 elsewhere, 405 for other methods, and serves a configured path', async () => {
    const server = await start(undefined, '/ferry/metrics');
    expect(server.url).toMatch(/\/ferry\/metrics$/);
    const origin = new URL(server.url).origin;
    expect((await call(`${origin}/metrics`, 'GET')).status).toBe(404);
    expect((await call(`${origin}/ferry/metrics?x=1`, 'GET')).status).toBe(200);
    const post = await call(server.url, 'POST');
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it('answers 500 when the registry fails', async () => {
    const server = await serveMetrics({
      registry: { contentType: 'text/plain', metrics: () => Promise.reject(new Error('collector broke')) },
      port: 0,
    });
    servers.push(server);
    const answer = await call(server.url, 'GET');
    expect([answer.status, answer.body]).toEqual([500, 'metrics failed: collector broke\n']);
  });

  it('closes twice without error, and then refuses connections', async () => {
    const server = await start();
    await scrape(server.url);
    await server.close();
    await server.close();
    await expect(call(server.url, 'GET')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('refuses a port in use with a FerryConfigError', async () => {
    const server = await start();
    await expect(
      serveMetrics({ registry: createFerryMetrics().registry, port: server.port }),
    ).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'port' });
  });
});
