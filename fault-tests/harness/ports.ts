import { createServer } from 'node:net';

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

/**
 * `count` consecutive free TCP ports on 127.0.0.1 (each also free at `+ offset` when offsets are
 * given), searched from a random start in [base, base + span) so parallel suites rarely collide.
 * A port found free is bound by the broker seconds later: two test files running at once (jest
 * runs two) start their searches in different halves of the span (JEST_WORKER_ID), so they do
 * not pick the same port in that window.
 */
export async function freePorts(
  base: number,
  count: number,
  options: { span?: number; offsets?: readonly number[] } = {},
): Promise<number[]> {
  const span = options.span ?? 1000;
  const offsets = options.offsets ?? [];
  // Groups start in [base, base + slots): none reaches past the span's end.
  const slots = span - count + 1;
  if (slots < 1) throw new Error(`freePorts: ${count} ports do not fit in a span of ${span}`);
  const half = Math.ceil(slots / 2);
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const offset = ((worker - 1) % 2) * half + Math.floor(Math.random() * half);
  for (let i = 0; i < slots; i += 1) {
    const first = base + ((offset + i) % slots);
    const ports = Array.from({ length: count }, (_, k) => first + k);
    const all = [...ports, ...ports.flatMap((p) => offsets.map((o) => p + o))];
    let ok = true;
    for (const port of all) {
      if (port > 65535 || !(await isFree(port))) {
        ok = false;
        break;
      }
    }
    if (ok) return ports;
  }
  throw new Error(`no ${count} free ports in [${base}, ${base + span})`);
}
