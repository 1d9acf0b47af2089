import type { InboxRecord, OutboxRecord } from '@ferry/core';

function text(value: string | null): string {
  return value === null ? '-' : JSON.stringify(value);
}

export function outboxLine(r: OutboxRecord): string {
  return [
    r.id,
    r.status,
    r.type,
    `tenant=${r.tenantId ?? '-'}`,
    `retries=${r.retryCount}/${r.maxRetries}`,
    `created=${r.createdAt.toISOString()}`,
    `error=${text(r.lastError)}`,
  ].join(' ');
}

export function inboxLine(r: InboxRecord): string {
  return [
    r.id,
    r.status,
    `version=${r.rowVersion}`,
    `consumer=${r.consumer}`,
    `message=${r.messageId}`,
    `tenant=${r.tenantId ?? '-'}`,
    `attempts=${r.attempts}/${r.maxAttempts}`,
    `created=${r.createdAt.toISOString()}`,
    `error=${text(r.lastError)}`,
  ].join(' ');
}

/** `name value` lines, for stats. */
export function keyValueLines(values: Record<string, number | string | null>): string[] {
  return Object.entries(values).map(([key, value]) => `${key} ${value ?? '-'}`);
}
