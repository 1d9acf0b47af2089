import { hash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by code point at every depth, no whitespace,
 * `undefined` object members dropped (as JSON.stringify does). Two payloads that are
 * equal as JSON values have the same canonical text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/** SHA-256 (hex) of the canonical JSON of a payload (one-shot crypto.hash: no Hash object per payload). */
export function payloadFingerprint(payload: unknown): string {
  return canonicalTextFingerprint(canonicalJson(payload));
}

/**
 * payloadFingerprint of the payload whose canonical JSON is `text` (acceptance's payloadText
 * writes it so), without parsing it again.
 */
export function canonicalTextFingerprint(text: string): string {
  return hash('sha256', text, 'hex');
}
