import type { Logger } from '../observe/logger';
import { withTranslation } from './dbErrors';
import type { SqlExecutor } from './executor';
import { withDeadlines } from './statementDeadline';

/**
 * `db` as ferry's own short reads use it (health, the metrics stats read, the CLI's reads beside
 * the admins'): each statement and transaction bounded by `timeoutMs` (withDeadlines: a silent
 * server is a retriable FERRY_TIMEOUT) and each failure translated (withTranslation: a lost
 * connection is FERRY_DATABASE_UNAVAILABLE, never the driver's words), naming `operation`; an
 * unclassified failure is logged to `log`.
 */
export function boundedExecutor(
  db: SqlExecutor,
  timeoutMs: number,
  operation: string,
  log?: Logger,
): SqlExecutor {
  return withTranslation(withDeadlines(db, timeoutMs), operation, undefined, log);
}
