import { setTimeout as delay } from 'node:timers/promises';
import { describeError } from '../errors';

const LEADER_WAIT_MS = 30_000;
const POLL_MS = 100;

/**
 * After a topic creation, polls until every partition of the topics has a leader, for both
 * clients. `probe` reads fresh metadata and resolves true once all leaders are there; a broker
 * answers UNKNOWN_TOPIC_OR_PARTITION (a rejected probe) until a new topic's metadata has
 * propagated, which kafkajs's own `waitForLeaders` does not wait out.
 */
export async function waitForLeaders(probe: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + LEADER_WAIT_MS;
  let lastError: unknown = null;
  for (;;) {
    const ready = await probe().catch((error: unknown) => {
      lastError = error;
      return false;
    });
    if (ready) return;
    if (performance.now() > deadline) {
      const why = lastError === null ? '' : ` (last metadata error: ${describeError(lastError)})`;
      throw new Error(`topics without leaders after ${LEADER_WAIT_MS} ms${why}`);
    }
    await delay(POLL_MS);
  }
}
