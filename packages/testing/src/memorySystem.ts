/** The `system` the in-memory consumer and publishers name (OpenTelemetry's `messaging.system`). */
export const MEMORY_SYSTEM = 'memory';
