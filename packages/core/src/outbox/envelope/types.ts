import { IDENTIFIER_LIMITS } from '../../validate/identifierLimits';

/** What an application emits. Only `type` and `payload` are required. */
export interface OutboxEventInput {
  readonly type: string;
  /** A JSON object (no functions, undefined, bigint, NaN or Infinity inside). */
  readonly payload: Readonly<Record<string, unknown>>;
  readonly destination?: string | null;
  /** Events sharing a key publish in insertion order, one at a time. */
  readonly orderingKey?: string | null;
  readonly tenantId?: string | null;
  readonly correlationId?: string | null;
  readonly causationId?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
  readonly traceparent?: string | null;
  readonly tracestate?: string | null;
  /** Overrides the emitter's retry.maxRetries for this event; stored on the row. */
  readonly maxRetries?: number;
}

export interface EnvelopeLimits {
  /** Characters in `type`. Default 255, at most 255 (the schema's CHECK). */
  readonly maxTypeLength: number;
  /** UTF-8 bytes of the serialized payload. Default 262,144 (256 KiB). */
  readonly maxPayloadBytes: number;
  /** Nesting depth of the payload (the payload object itself is depth 1). Default 32. */
  readonly maxPayloadDepth: number;
  /** UTF-8 bytes of all header names and values together. Default 8,192. */
  readonly maxHeaderBytes: number;
  /** Number of headers. Default 64. */
  readonly maxHeaders: number;
  /**
   * Characters in destination, ordering key, tenant, correlation / causation id. Default 255, at
   * most 512; a tenant id never more than IDENTIFIER_LIMITS.tenantId (255), what acceptance takes.
   */
  readonly maxIdLength: number;
}

/**
 * The largest value each limit may be set to; above it, createEmitter throws FerryConfigError.
 * maxTypeLength: the schema's CHECK (length(event_type) BETWEEN 1 AND 255). maxIdLength:
 * ordering_key and tenant_id are btree-indexed and an index entry must stay under ~2,700
 * bytes; 512 characters of up to 4 UTF-8 bytes each stay below it. maxPayloadBytes: 16 MiB,
 * the inbox's bound too, far below jsonb's 256 MiB. maxPayloadDepth: 256 keeps
 * JSON.stringify and PostgreSQL's JSON parser well inside their stacks.
 */
export const ENVELOPE_LIMIT_BOUNDS: EnvelopeLimits = {
  maxTypeLength: IDENTIFIER_LIMITS.eventType,
  maxPayloadBytes: 16 * 1024 * 1024,
  maxPayloadDepth: 256,
  maxHeaderBytes: 1024 * 1024,
  maxHeaders: 1_000,
  maxIdLength: 512,
};

export const DEFAULT_ENVELOPE_LIMITS: EnvelopeLimits = {
  maxTypeLength: IDENTIFIER_LIMITS.eventType,
  maxPayloadBytes: 262_144,
  maxPayloadDepth: 32,
  maxHeaderBytes: 8_192,
  maxHeaders: 64,
  maxIdLength: 255,
};

/** A validated envelope, ready for INSERT. */
export interface ValidEnvelope {
  readonly id: string;
  readonly type: string;
  readonly payloadJson: string;
  /**
   * The payload's UTF-8 bytes as PostgreSQL's jsonb text writes it (payloadJson's, a space after
   * each `:` and `,`, numbers in plain digits): what a claim returns, stored as payload_bytes.
   */
  readonly payloadBytes: number;
  readonly destination: string | null;
  readonly orderingKey: string | null;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
  readonly causationId: string | null;
  readonly headersJson: string;
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  readonly maxRetries: number;
}
