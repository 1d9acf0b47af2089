const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Bytes decoded as UTF-8, or undefined when they are not valid UTF-8: never U+FFFD in their
 * place, since two ids, tenants or keys that differ only in invalid bytes would become one. A
 * leading byte order mark is kept (the text is what was sent).
 */
export function strictUtf8Text(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}
