import { request } from 'node:http';

/** GET `url`: its status and body as text; an answer that does not come within 20 s rejects. */
export function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}
