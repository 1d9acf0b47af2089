/**
 * Credentials in connection URLs: scheme://user:password@host, up to the authority's last '@'
 * (an empty user, an unencoded '@' in the password), or a password with an unencoded '/', '?' or
 * '#' (generated base64 passwords): `user:` then anything but whitespace, '@' and ':' up to an
 * '@', unless what follows the ':' is a port and a path (`http://host:8080/p?next=a@b.com`). A
 * database or broker URL (postgres, amqp, redis, mongodb, mysql, …: a fixed list, read behind the
 * `://`, at most 13 characters back) has no '@' in a path: there `user:` up to the next '@' is
 * credentials even when the password reads like a port and a path (`postgres://app:123/abc@db`).
 * The redactor's first rule; log lines get it alone (observe/logger.ts), whatever they carry.
 *
 * Anchored on the `://` (after a scheme character), never on the scheme: a pattern that begins
 * with the scheme is tried from every position of a long word, to its end (quadratic: seconds
 * for 16,000 characters, what the relay reads of an error).
 */
export const URL_CREDENTIALS =
  /(?<=[a-z0-9+.-]):\/\/(?:[^\s/?#]*|[^\s/?#@:]*:(?!\d*(?:[/?#\s]|$))[^\s@:]*|(?<=(?:postgres|postgresql|amqp|amqps|redis|rediss|mongodb|mongodb\+srv|mysql|mariadb|mssql|sqlserver|nats|mqtt|mqtts|kafka):\/\/)[^\s/?#@:]*:[^\s@:]*)@/gi;
export const URL_CREDENTIALS_REPLACEMENT = '://[redacted]@';

/** `text` without the user and password of any URL in it (`amqp://[redacted]@host`). */
export function stripUrlCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, URL_CREDENTIALS_REPLACEMENT);
}

/** Whether `text` holds a URL with a user or password. */
export function hasUrlCredentials(text: string): boolean {
  URL_CREDENTIALS.lastIndex = 0;
  const found = URL_CREDENTIALS.test(text);
  URL_CREDENTIALS.lastIndex = 0;
  return found;
}
