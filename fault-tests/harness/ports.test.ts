/**
 * Review finding (review8; failed first). freePorts (ports.ts) promises ports in [base, base + span), but:
 * - when `count` exceeds half the span, `Math.random() * (half - count)` is negative and the
 *   search starts below `base` (freePorts(b, 3, { span: 4 }) can return b - 1);
 * - a group that starts near the end of the span is not wrapped: with span 800 and count 2
 *   (Kafka's [29100, 29900)), an odd start reaches the group (29899, 29900), and 29900 is the
 *   first port of ElasticMQ's range, the very overlap review7 moved the ranges apart to avoid.
 * Suggested fix: pick `first` from [base, base + span - count] (groups never cross the end),
 *   and refuse (throw) a count over half the span, or clamp the random offset at 0.
 */
import { createServer, type Server } from 'node:net';
import { freePorts } from './ports';

const BASE = 28_410;

function bind(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });
}

const worker = process.env.JEST_WORKER_ID;
afterEach(() => {
  jest.restoreAllMocks();
  process.env.JEST_WORKER_ID = worker;
});

test('a count over half the span never gives a port below base', async () => {
  jest.spyOn(Math, 'random').mockReturnValue(0.5);
  process.env.JEST_WORKER_ID = '1';
  const ports = await freePorts(BASE, 3, { span: 4 });
  expect(ports.every((port) => port >= BASE && port < BASE + 4)).toBe(true);
});

test('a group near the end of the span never reaches past it', async () => {
  jest.spyOn(Math, 'random').mockReturnValue(0.99);
  process.env.JEST_WORKER_ID = '1';
  const held = await Promise.all(Array.from({ length: 7 }, (_, k) => bind(BASE + 10 + k)));
  try {
    const ports = await freePorts(BASE + 10, 2, { span: 8 }).catch(() => [] as number[]);
    expect(ports.filter((port) => port >= BASE + 18)).toEqual([]);
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
});
