/**
 * The traffic of the hostile-input suite, broker-neutral: valid messages interleaved with one
 * message of every hostile class. Each message carries `x-fault-case` (its case id), so a dead
 * letter can be matched to what was sent even when the message has no identity.
 */
import { randomUUID } from 'node:crypto';
import { FERRY_HEADERS } from '@ferry/core';

export type HostileClass =
  | 'nul_escape'
  | 'lone_surrogate'
  | 'invalid_utf8'
  | 'not_json'
  | 'json_scalar'
  | 'json_array'
  | 'empty_body'
  | 'tombstone'
  | 'oversize_body'
  | 'unread_body'
  | 'oversize_headers'
  | 'spoofed_tenant'
  | 'forged_attempts'
  | 'same_id_other_body'
  | 'no_identity'
  | 'unsupported_content_type'
  | 'deep_nesting';

export const CASE_HEADER = 'x-fault-case';
/** Every consumer of the suite is pinned to this tenant. */
export const TENANT = 'acme';
/** The inbox's maxPayloadBytes in the suite; oversize bodies are twice that. */
export const MAX_PAYLOAD_BYTES = 16_384;

export interface WireMessage {
  readonly caseId: string;
  readonly hostile: HostileClass | null;
  /** ferry's x-ferry-message-id, or null for none. */
  readonly messageId: string | null;
  /** The body bytes; null is a tombstone (Kafka). */
  readonly body: Buffer | null;
  /** Headers besides x-ferry-message-id and x-fault-case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string | null;
  /** 'accepted' for a valid message; otherwise the reject reason its dead letter must carry. */
  readonly expect: string;
}

/** The reject reason each class must be dead-lettered with ('accepted': it is valid and must be accepted). */
export const EXPECTED: Readonly<Record<HostileClass, string>> = {
  nul_escape: 'invalid_text',
  lone_surrogate: 'invalid_text',
  invalid_utf8: 'unparseable_body',
  not_json: 'unparseable_body',
  json_scalar: 'unparseable_body',
  json_array: 'unparseable_body',
  empty_body: 'unparseable_body',
  tombstone: 'tombstone',
  oversize_body: 'payload_too_large',
  /** RabbitMQ only: its dead letter also says the body was not read (x-ferry-reject-body-bytes). */
  unread_body: 'payload_too_large (body not read)',
  oversize_headers: 'headers_too_large',
  spoofed_tenant: 'tenant_mismatch',
  forged_attempts: 'accepted',
  same_id_other_body: 'fingerprint_conflict',
  no_identity: 'missing_identity',
  unsupported_content_type: 'unsupported_content_type',
  deep_nesting: 'payload_too_deep',
};

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function deep(levels: number): unknown {
  let value: unknown = { leaf: true };
  for (let i = 0; i < levels; i++) value = { next: value };
  return value;
}

function hostileMessage(kind: HostileClass, caseId: string, conflictWith: string): WireMessage {
  const base = {
    caseId,
    hostile: kind,
    messageId: caseId as string | null,
    headers: {} as Record<string, string>,
    contentType: 'application/json' as string | null,
    expect: EXPECTED[kind],
  };
  switch (kind) {
    case 'nul_escape':
      return { ...base, body: Buffer.from('{"text":"a\\u0000b"}') };
    case 'lone_surrogate':
      return { ...base, body: Buffer.from('{"text":"\\ud800"}') };
    case 'invalid_utf8':
      return {
        ...base,
        body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
      };
    case 'not_json':
      return { ...base, body: Buffer.from('this is not json') };
    case 'json_scalar':
      return { ...base, body: Buffer.from('42') };
    case 'json_array':
      return { ...base, body: Buffer.from('[1,2,3]') };
    case 'empty_body':
      return { ...base, body: Buffer.alloc(0) };
    case 'tombstone':
      return { ...base, body: null };
    case 'oversize_body':
      return { ...base, body: json({ blob: 'x'.repeat(2 * MAX_PAYLOAD_BYTES) }) };
    case 'unread_body':
      // Over a RabbitMQ consumer's default maxBodyBytes (16 × the limit, at least 1 MiB): never read.
      return { ...base, body: json({ blob: 'x'.repeat(2 * 1_048_576) }) };
    case 'oversize_headers': {
      const headers: Record<string, string> = {};
      for (let i = 0; i < 100; i++) headers[`x-extra-${i}`] = `value-${i}`;
      return { ...base, body: json({ n: caseId }), headers };
    }
    case 'spoofed_tenant':
      return { ...base, body: json({ n: caseId }), headers: { [FERRY_HEADERS.tenantId]: 'globex' } };
    case 'forged_attempts':
      return { ...base, body: json({ n: caseId }), headers: { [FERRY_HEADERS.transportAttempts]: '99' } };
    case 'same_id_other_body':
      return { ...base, messageId: conflictWith, body: json({ other: 'body' }) };
    case 'no_identity':
      return { ...base, messageId: null, body: json({ n: caseId }) };
    case 'unsupported_content_type':
      return { ...base, body: Buffer.from('plain text'), contentType: 'text/plain' };
    case 'deep_nesting':
      return { ...base, body: json(deep(200)) };
  }
}

/**
 * `validBetween` valid messages, then one hostile message of each class, and so on, ending with
 * valid ones. The `same_id_other_body` message reuses the id of the first valid message, which is
 * always sent before it.
 */
export function buildTraffic(classes: readonly HostileClass[], validBetween = 3): WireMessage[] {
  const run = randomUUID().slice(0, 8);
  const messages: WireMessage[] = [];
  let n = 0;
  const valid = () => {
    const caseId = `valid-${run}-${n++}`;
    const tenant: Record<string, string> = n % 2 === 0 ? { [FERRY_HEADERS.tenantId]: TENANT } : {};
    messages.push({
      caseId,
      hostile: null,
      messageId: caseId,
      body: json({ n: caseId }),
      headers: tenant,
      contentType: 'application/json',
      expect: 'accepted',
    });
  };
  for (let i = 0; i < validBetween; i++) valid();
  const firstValid = messages[0]!.caseId;
  for (const kind of classes) {
    messages.push(hostileMessage(kind, `${kind}-${run}`, firstValid));
    for (let i = 0; i < validBetween; i++) valid();
  }
  return messages;
}
