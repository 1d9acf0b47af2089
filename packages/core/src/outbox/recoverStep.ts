import type { Logger } from '../observe/logger';
import type { ResolvedOutboxOptions } from './options';
import type { OutboxEvent } from './events';
import type { RelayStore } from './store';

/**
 * Lease recovery as the relay runs it every tenth cycle: requeues expired claims, fails the
 * rows the poison guard stops, and reports both. Writes the counts into `result`.
 */
export async function recoverStep(
  store: RelayStore,
  options: ResolvedOutboxOptions,
  emit: (event: OutboxEvent) => void,
  logger: Logger,
  result: { recovered: number; poisoned: number },
): Promise<void> {
  const { requeued, poisoned } = await store.recover({
    limit: options.recoveryBatchSize,
    maxClaims: options.poisonGuard.maxClaims,
  });
  result.recovered = requeued;
  result.poisoned = poisoned.length;
  if (requeued + poisoned.length > 0)
    emit({ type: 'recovered', requeued, poisoned: poisoned.map((p) => p.id) });
  for (const row of poisoned) {
    logger.error({ id: row.id, type: row.type }, row.error);
    emit({
      type: 'failed',
      id: row.id,
      eventType: row.type,
      attempt: row.retryCount + 1,
      error: row.error,
      reason: 'poison_guard',
    });
  }
}
