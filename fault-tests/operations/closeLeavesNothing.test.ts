/**
 * Review 145: after close() resolves, nothing of the component is left running.
 *
 * Breaks: a child `node` process (fixtures/closeLeavesNothing.ts) builds each component in turn
 * (the relay, the inbox worker and its LISTEN connection, the RabbitMQ, Kafka (kafkajs and
 * @platformatic/kafka) and SQS publishers and consumers), points it at a closed port or at a silent
 * peer (accepts connections, never answers) as its database or broker, lets it retry for a while
 * (short backoffs), calls close() twice at once with a publish in flight for the publishers, and
 * goes on to the next; then each consumer on its running broker with its inbox's database down,
 * closed while it holds a delivery it could not accept (fixtures/closeDatabaseDown.ts). NODE_ENV is not `test`: kafkajs's production retry timings apply.
 *
 * Invariant: every close() resolves (both calls) within a liveness bound; nothing of a component
 * (a log line, an observer event, a pool error) comes after its close() resolved; no unhandled
 * rejection; and once the last close() resolved the process exits on its own, exit code 0 (no
 * timer, socket or retry loop of any component holds it). The bounds are liveness bounds, not
 * timing thresholds.
 */
import { closedPort } from '../../test-support/closedPort';
import { startFixture, stopChild, type RunningChild } from './childProcess';
import { waitFor } from './support';

/** The child runs every case within this (each close() is bounded at 30 s inside it). */
const ALL_CASES_MS = 400_000;
/** How long the process may take to end on its own after its last close() resolved. */
const EXIT_MS = 30_000;

jest.setTimeout(ALL_CASES_MS + EXIT_MS + 60_000);

/** The lines of each case that came after its `closed` line. */
function linesAfterClose(lines: readonly string[]): string[] {
  const closed = new Set<string>();
  const late: string[] = [];
  for (const line of lines) {
    const [kind, name] = line.split(' ');
    if (kind === 'closed' && name !== undefined) closed.add(name);
    else if (kind === 'line' && name !== undefined && closed.has(name)) late.push(line);
  }
  return late;
}

describe('review 145: nothing of a component runs after its close() resolved', () => {
  let child: RunningChild | undefined;
  afterAll(() => stopChild(child));

  it('every component in an outage closes, reports nothing after, and the process exits on its own', async () => {
    child = startFixture('closeLeavesNothing.ts', [String(await closedPort())], { NODE_ENV: 'production' });
    await child.waitForLine('the last case closed', (line) => line === 'done', ALL_CASES_MS);
    const running = child;
    await waitFor(
      'the process to exit on its own after the last close()',
      () => running.hasExited() || undefined,
      EXIT_MS,
    ).catch(() => undefined);
    const { lines } = running;
    expect({
      stuck: lines.filter((line) => line.startsWith('stuck ')),
      unseen: lines.filter((line) => line.startsWith('unseen ')),
      unhandled: lines.filter((line) => line.startsWith('unhandled ')),
      late: linesAfterClose(lines),
      held: lines.filter((line) => line.startsWith('held ')),
      exited: running.hasExited(),
    }).toEqual({ stuck: [], unseen: [], unhandled: [], late: [], held: [], exited: true });
    expect(await running.exited).toEqual({ code: 0, signal: null });
    // Every case ran and both of its close() calls resolved.
    const closedLines = lines.filter((line) => line.startsWith('closed '));
    expect(closedLines.filter((line) => !/^closed \S+ closed in \d+ ms$/.test(line))).toEqual([]);
    const cases = Number(lines.find((line) => line.startsWith('cases '))?.slice('cases '.length));
    expect(closedLines).toHaveLength(cases);
  });
});
